"""Authorize before work: the API key of a request that carries a body is checked before
one byte of that body is read or parsed (docs/operations.md, "Limits on requests").

Without this, a create body was read, parsed, checked and validated, and only then was
its key looked at: an anonymous client could make the one event loop parse large nested
bodies for every other agent. Here, in keys mode, a POST, PUT, PATCH or DELETE without a
valid key is answered 401 at once and its connection closed, so what a request costs
before it is authorized is its head (bounded by `app/core/http/server.py`) and one key
check: a SHA-256 of at most 256 characters and one indexed read, and no read at all for
a missing key or one without jobgate's prefix.

Provider webhooks are exempt (their signature is their key, and checking it needs the
body, bounded by `JOBGATE_MAX_BODY_BYTES`), and so are the operator's pages, whose forms
check the key (Bearer, HTTP Basic or the session cookie) before they parse the form and
answer a refusal as a page a browser shows, and the sign-in and sign-out forms, whose
one field is the key itself (app/views/login.py). The principal found is kept on the
request, so the route's own key check does not look it up again.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.auth.deps import authenticate
from app.core.http.errors import ApiError, error_response

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Signed by the provider (verified with the body); the operator's pages (key first, HTML);
# signing in and out (the form's one field is the key).
EXEMPT_PREFIXES = ("/v1/webhooks/", "/operations", "/login", "/logout")


class KeyFirst:
    """Pure ASGI middleware: 401 before the body for a request that needs a key and has no
    valid one; everything else passes through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if (
            scope["type"] != "http"
            or scope.get("method") not in BODY_METHODS
            or path.startswith(EXEMPT_PREFIXES)
        ):
            await self.app(scope, receive, send)
            return
        request = Request(scope)  # no receive: the body cannot be read from here
        try:
            await authenticate(request)
        except ApiError as exc:
            # Closed after the answer: the body the client is still sending is never read.
            headers = {**exc.headers, "Connection": "close"}
            response = error_response(exc.status, exc.code, exc.message, exc.details, headers)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
