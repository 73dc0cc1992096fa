"""The HTTP server of `jobgate serve`: uvicorn, with limits on how a request may arrive.

uvicorn times out idle keep-alive connections, but not a request that is arriving:
a client that sends half a request line, or one header byte every few seconds, holds
its connection (and a descriptor) for as long as it likes, and with httptools there
is no bound on a request head's size either. `guarded_protocol` is uvicorn's httptools
protocol with both bounds (docs/operations.md, "Limits on requests"):

- the request head (request line and headers) must be complete within
  `head_timeout` seconds of the connection opening, or of the previous response on a
  kept-alive connection: otherwise 408 and the connection is closed;
- it may be at most `max_head_bytes` long: otherwise 431 and closed.

The body is bounded by `app.core.http.limits.BodyLimit` (size, and time to arrive), where
the app reads it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class _HeadTooLarge(Exception):
    """Raised from a parser callback to stop parsing a head that is over the limit."""


_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}
_BODIES = {
    408: b'{"error": {"code": "request_timeout", "message": "The request line and headers '
    b'did not arrive in time.", "details": {}}}',
    431: b'{"error": {"code": "headers_too_large", "message": "The request line and headers '
    b'are too large.", "details": {}}}',
}


def guarded_protocol(*, head_timeout: float, max_head_bytes: int) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol class with these bounds on every request head."""

    class GuardedHttpToolsProtocol(HttpToolsProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.head_timer: asyncio.TimerHandle | None = None
            self.head_bytes = 0
            self.refusal: int | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.arm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self.disarm_head_timer()
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self.head_bytes = 0

        def on_url(self, url: bytes) -> None:
            self.count_head(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self.count_head(len(name) + len(value) + 4)  # ": " and CRLF
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            self.disarm_head_timer()
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            # The next request on this connection, if any; a pipelined one whose head is
            # already in has just been started (its cycle is not complete): not that one.
            idle = self.cycle is None or self.cycle.response_complete
            if idle and not self.transport.is_closing():
                self.arm_head_timer()

        def send_400_response(self, msg: str) -> None:
            # uvicorn answers any parser error 400; the one raised below is a 431.
            if self.refusal is not None:
                self.refuse(self.refusal)
                return
            super().send_400_response(msg)

        def count_head(self, n: int) -> None:
            self.head_bytes += n
            if self.head_bytes > max_head_bytes:
                self.refusal = 431
                raise _HeadTooLarge

        def arm_head_timer(self) -> None:
            self.disarm_head_timer()
            self.head_timer = asyncio.get_running_loop().call_later(head_timeout, self.refuse, 408)

        def disarm_head_timer(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def refuse(self, status: int) -> None:
            """Answer `status` with a short JSON error and close the connection."""
            self.disarm_head_timer()
            if self.transport.is_closing():
                return
            body = _BODIES[status]
            self.transport.write(
                b"HTTP/1.1 %d %s\r\n" % (status, _REASONS[status])
                + b"content-type: application/json\r\n"
                + b"content-length: %d\r\n" % len(body)
                + b"connection: close\r\n\r\n"
                + body
            )
            self.transport.close()

    return GuardedHttpToolsProtocol
