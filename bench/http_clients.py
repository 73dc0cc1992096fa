"""The HTTP client a bench's own side uses: httpx2 (the gateway's library) or httpx.

One place for `--client` and for a client pooled for a given concurrency, so every
bench compares the same thing (`bench/http_client_cost.py` shows why the library matters).
"""

from __future__ import annotations

import importlib
from typing import Any

LIBRARIES = ("httpx2", "httpx")  # the first is the default: what the gateway calls with


def pooled(lib: str, base_url: str, concurrency: int, timeout: float) -> Any:
    """An AsyncClient of `lib` whose pool keeps `concurrency` connections open."""
    http = importlib.import_module(lib)
    limits = http.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    return http.AsyncClient(base_url=base_url, timeout=timeout, limits=limits)
