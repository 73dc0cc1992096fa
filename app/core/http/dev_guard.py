"""Dev mode (no API keys, loopback only) made safe from the web pages its user opens.

With `JOBGATE_AUTH=dev` anyone who reaches the port is the admin, and a web page can
reach a loopback port two ways: by DNS rebinding (its own name re-pointed at
127.0.0.1, so the browser treats the gateway as the page's own origin) and by simple
cross-site requests (a form or `text/plain` POST, which need no CORS preflight). This
pure ASGI middleware, on every route in dev mode only (docs/security.md):

- refuses a `Host` that is not a loopback name (421 `host_not_allowed`): a rebound
  name is never served, so the page can neither read nor act;
- refuses a request whose `Origin` is not the gateway's own origin, or that a browser
  marks as cross-site (`Sec-Fetch-Site`) when it changes something (403
  `cross_origin_refused`);
- requires a JSON body type on every POST to the API and to `/mcp` (415
  `json_required`): POST is the one method that changes something a browser sends
  cross-site without a preflight, and never with a JSON body type; the gateway grants
  no preflight. The operator pages' form posts keep their own
  same-origin check (app/views/render.py); provider webhooks are signed instead.

With API keys none of this applies: a page cannot attach the key (the API reads only
`Authorization`; the operator pages' session cookie is SameSite=Lax and their form posts
are checked for this origin, app/views/render.py), and the gateway may sit behind a
proxy under any name.
"""

from __future__ import annotations

import ipaddress
import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
JSON_ONLY = ("/v1/", "/mcp")  # POSTs here need a JSON body type
SIGNED_INSTEAD = "/v1/webhooks/"  # providers' own formats; their signature is the guard


def is_loopback_host(host: str) -> bool:
    """`localhost`, a name under `.localhost` (browsers resolve those to loopback
    themselves, RFC 6761), or a loopback address."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(authority: str) -> str:
    """The host of a `Host` header value (`[::1]:8080` -> `::1`)."""
    parts = urlsplit(f"//{authority}")
    return parts.hostname or ""


class DevModeGuard:
    """Pure ASGI middleware; every check answers before the app runs."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = refuse(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, code, message = refusal
        raw = json.dumps({"error": {"code": code, "message": message, "details": {}}}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(raw)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": raw})


def refuse(scope: Scope) -> tuple[int, str, str] | None:
    """(status, code, message) when dev mode must not serve this request, else None."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    host = headers.get("host", "")
    if not is_loopback_host(_host_name(host)):
        return (
            421,
            "host_not_allowed",
            "Dev mode (no API keys) answers only to a loopback host name (localhost, "
            "127.0.0.1, [::1]); use one of those, or run with API keys.",
        )
    scheme = scope.get("scheme", "http")
    origin = headers.get("origin")
    if origin is not None and origin != f"{scheme}://{host.lower()}":
        return (
            403,
            "cross_origin_refused",
            "Dev mode refuses requests from other web origins (a page cannot act for you).",
        )
    method = scope["method"]
    if method in SAFE_METHODS:
        return None
    if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return (403, "cross_origin_refused", "Cross-site requests are refused in dev mode.")
    path = scope["path"]
    if method == "POST" and path.startswith(JSON_ONLY) and not path.startswith(SIGNED_INSTEAD):
        if not _is_json(headers.get("content-type", "")):
            return (
                415,
                "json_required",
                "Dev mode: a POST needs Content-Type: application/json "
                "(send a JSON body, {} if there is nothing to say).",
            )
    return None


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )
