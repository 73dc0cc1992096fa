"""End a held request's work when its client goes away (pure ASGI middleware).

A request that holds (an MCP tool call, `/wait`) keeps its work going (a database
watcher, the in-process REST call behind a tool) until it answers, whether or not
anyone is still there to read the answer. Once such a request's body has been read,
the only message the server can still deliver is `http.disconnect`; this middleware
listens for it beside the app and cancels the app when it comes, so the work ends
with the client instead of at its own timeout.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

DISCONNECT: Message = {"type": "http.disconnect"}


class CancelOnDisconnect:
    """Cancels the wrapped app for requests `held(path)` says may hold, once the client
    disconnects; every other request passes through untouched."""

    def __init__(self, app: ASGIApp, held: Callable[[str], bool]) -> None:
        self.app = app
        self.held = held

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.held(scope["path"]):
            await self.app(scope, receive, send)
            return
        body_read = anyio.Event()
        gone = anyio.Event()

        async def app_receive() -> Message:
            if body_read.is_set():
                await gone.wait()  # the watcher owns the real `receive` now
                return DISCONNECT
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            elif not message.get("more_body", False):
                body_read.set()
            return message

        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                await body_read.wait()
                while (await receive())["type"] != "http.disconnect":
                    pass  # nothing else can come once the body is in
                gone.set()
                tg.cancel_scope.cancel()  # the client is gone: so is the work for it

            tg.start_soon(watch)
            await self.app(scope, app_receive, send)
            tg.cancel_scope.cancel()  # answered: stop listening
