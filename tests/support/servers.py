"""Run an ASGI app on a real uvicorn server in a background thread, for tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from tests.support.timing import budget

_START_TIMEOUT_S = budget(10.0)
_STOP_TIMEOUT_S = 10.0


@contextmanager
def serve_app(app: Any, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve `app` on a free port of `host`; yields its base URL (`http://HOST:PORT`).

    The socket is bound here (port 0) before uvicorn starts, so the port is known
    without racing another process for it. On exit the server shuts down cleanly:
    lifespan shutdown runs and the thread is joined.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    # uvicorn installs signal handlers only on the main thread, so a thread is safe here.
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("uvicorn stopped during startup (see its log)")
            if time.monotonic() > deadline:
                raise TimeoutError(f"uvicorn did not start within {_START_TIMEOUT_S}s")
            time.sleep(0.005)
        url_host = f"[{host}]" if ":" in host else host
        yield f"http://{url_host}:{port}"
    finally:
        server.should_exit = True
        thread.join(_STOP_TIMEOUT_S)
        sock.close()
