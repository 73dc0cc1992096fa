"""The HTTP client a bench's own side uses: httpx2 (the gateway's library) or httpx.

One place for `--client` and for a client pooled for a given concurrency, so every
bench compares the same thing (`bench/http_client_cost.py` shows why the library matters).
"""

from __future__ import annotations

import importlib
from typing import Any

LIBRARIES = ("httpx2", "httpx")  # the first is the default: what the gateway calls with


def pooled(lib: str, base_url: str, concurrency: int, timeout: float) -> Any:
    """An AsyncClient of `lib` whose pool keeps `concurrency` connections open; `lib`
    "jobgate" is the gateway's own httpx2 client (app/providers/outbound.py)."""
    http = importlib.import_module("httpx2" if lib == "jobgate" else lib)
    limits = http.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    if lib == "jobgate":
        from app.providers.outbound import OutboundClient

        return OutboundClient(base_url=base_url, timeout=timeout, limits=limits)
    return http.AsyncClient(base_url=base_url, timeout=timeout, limits=limits)
