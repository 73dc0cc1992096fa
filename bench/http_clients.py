"""The HTTP client a bench's own side uses: httpx2, the one library jobgate uses.

One place for a client pooled for a given concurrency, so every bench compares the
same thing.
"""

from __future__ import annotations

import importlib
from typing import Any

LIBRARIES = ("httpx2",)  # the one HTTP client library (the gateway and its agents)


def pooled(lib: str, base_url: str, concurrency: int, timeout: float) -> Any:
    """An AsyncClient of `lib` whose pool keeps `concurrency` connections open; `lib`
    "jobgate" is the gateway's own httpx2 client (app/providers/calls/outbound.py)."""
    http = importlib.import_module("httpx2" if lib == "jobgate" else lib)
    limits = http.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    return http.AsyncClient(base_url=base_url, timeout=timeout, limits=limits)
