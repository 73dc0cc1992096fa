"""Strict JSON request bodies: parsed and checked by the intake validator first.

FastAPI parses bodies with `json.loads`, which accepts `NaN`, `Infinity`, `1e400`
and integers of any size, and raises RecursionError on deep nesting. Routers built
with `StrictJsonRoute` parse the body with `json_guard.loads` and check it with
`json_guard.check` before FastAPI sees it, so a bad value is a 4xx with its
JSON pointer and nothing downstream (validation, the handler, the database) runs.
"""

from __future__ import annotations

import email.message
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from app.core.http import json_guard

_UNREAD = object()  # the body has not been parsed yet


class _StrictJsonRequest(Request):
    """A request whose `json()` is the guarded parse (FastAPI reads the body through it)."""

    _checked: Any = _UNREAD

    async def json(self) -> Any:
        if self._checked is _UNREAD:
            value = json_guard.loads(await self.body())
            json_guard.check(value)
            self._checked = value
        return self._checked


def _is_json(request: Request) -> bool:
    """The same test FastAPI applies before it parses a body as JSON."""
    content_type = request.headers.get("content-type")
    if not content_type:
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


class StrictJsonRoute(APIRoute):
    """An APIRoute whose JSON body is parsed strictly and checked before anything runs."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler

        async def strict(request: Request) -> Response:
            guarded = _StrictJsonRequest(request.scope, request.receive)
            if _is_json(guarded) and await guarded.body():
                await guarded.json()  # a failure here is an ApiError the app answers
            return await handler(guarded)

        return strict
