"""Refuse request bodies over the configured size, or too slow to arrive, before any
handler reads them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    """Pure ASGI middleware: 413 with a JSON error body; nothing downstream runs.

    The body is read here, in full and counted, before the app is called, then
    replayed to it: a chunked body (no Content-Length) over the limit is refused
    the same way as a declared one, instead of failing inside the app's own read.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, read_timeout: float | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        # Seconds for the whole body to arrive once the head has: a client that trickles
        # it (or stops halfway) is answered 408 and its connection closed.
        self.read_timeout = read_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._reject(send)
            return
        chunks: list[bytes] = []
        seen = 0
        try:
            async with asyncio.timeout(self.read_timeout):
                while True:
                    msg = await receive()
                    if msg["type"] != "http.request":
                        return  # the client went away before its body ended: nobody to answer
                    chunk = msg.get("body", b"")
                    seen += len(chunk)
                    if seen > self.max_bytes:
                        await self._reject(send)
                        return
                    chunks.append(chunk)
                    if not msg.get("more_body", False):
                        break
        except TimeoutError:
            await self._timed_out(send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # e.g. http.disconnect, for streaming responses
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        await self.app(scope, replay, send)

    async def _reject(self, send: Send) -> None:
        body: dict[str, Any] = {
            "error": {
                "code": "body_too_large",
                "message": f"Request bodies are limited to {self.max_bytes} bytes.",
                "details": {"max_bytes": self.max_bytes},
            }
        }
        await _close_with(send, 413, body)

    async def _timed_out(self, send: Send) -> None:
        body: dict[str, Any] = {
            "error": {
                "code": "request_timeout",
                "message": f"The request body did not arrive within {self.read_timeout:g} s.",
                "details": {},
            }
        }
        await _close_with(send, 408, body)


async def _close_with(send: Send, status: int, body: dict[str, Any]) -> None:
    """A JSON error, with the connection closed after it (the rest of the body is not read)."""
    raw = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(raw)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": raw})
