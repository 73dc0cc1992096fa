"""The listening socket of `jobgate serve`, bound before anything else starts.

uvicorn binds its port only after the application's start-up, and answers a busy port
with the same exit code as any other start-up failure. Binding first means a busy port
is refused in one line, with its own exit code (docs/operations.md, "Exit codes"),
before a database is migrated or an observer claims work.
"""

from __future__ import annotations

import socket

from app.core.runtime.refusal import PortBusy


def bind_listener(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port (not yet listening), or `PortBusy` saying why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    # As uvicorn does: a port left in TIME_WAIT by a previous run may be bound again;
    # one another process is listening on may not.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise PortBusy(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); stop what uses it "
            "or choose another port with --port"
        ) from None
    return sock
