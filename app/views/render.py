"""Rendering and request hygiene for the operator pages.

Templates are Jinja2 with autoescape forced on, so every value from the database
(labels, causes, provider bodies) is escaped. Every page carries headers that
forbid framing and scripts; POSTs are refused unless they come from this origin.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from urllib.parse import urlencode as urlencode_query

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from app.auth.sessions import COOKIE as SESSION_COOKIE
from app.core.http.errors import ApiError
from app.core.text import degrade
from app.providers.language.secrets import REDACTED

HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE / "static"
MAX_PRETTY_CHARS = 20_000  # a stored body is already truncated; this bounds the page too
# Headers that may carry a credential: always masked on a page, even if stored unmasked.
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"}
)
SECURITY_HEADERS = {
    # No script at all; styles only from our own stylesheet; forms only post back here.
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # Same-origin pages still send a Referer, which the POST origin check can use.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
_DEFAULT_PORTS = {"http": 80, "https": 443}


def format_ts(value: datetime | None) -> str:
    """An absolute UTC time, to the second."""
    if value is None:
        return "—"
    return value.strftime("%Y-%m-%d %H:%M:%S") + " UTC"


def relative(value: datetime | None, now: datetime) -> str:
    """`in 4m 10s` or `12s ago`, for deadlines and lease expiries."""
    if value is None:
        return ""
    seconds = round((value - now).total_seconds())
    if seconds == 0:
        return "now"
    span, parts = abs(seconds), []
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m"), (1, "s")):
        n, span = divmod(span, size)
        if n:
            parts.append(f"{n}{unit}")
    text = " ".join(parts[:2])  # two units are enough to read at a glance
    return f"in {text}" if seconds > 0 else f"{text} ago"


def pretty(value: Any) -> str:
    """Indented JSON for a <pre>, bounded in size (the template escapes it)."""
    try:
        text = json.dumps(value, indent=2, sort_keys=True, default=str, ensure_ascii=False)
    except (RecursionError, ValueError):  # a value stored before depth was bounded
        text = "(nested too deep to display)"
    if len(text) > MAX_PRETTY_CHARS:
        return text[:MAX_PRETTY_CHARS] + "\n… (cut for display)"
    return text


def header_value(name: str, value: Any) -> str:
    """A stored header as shown: credential-bearing names are masked whatever was stored."""
    return REDACTED if str(name).lower() in CREDENTIAL_HEADERS else str(value)


def urlencode(value: Any) -> str:
    """Jinja's `urlencode`, after `degrade`: it encodes to UTF-8 in the middle of a page."""
    return str(jinja2.filters.do_urlencode(degrade(value)))


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template, whatever its extension
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        ts=format_ts, rel=relative, pretty=pretty, header_value=header_value, urlencode=urlencode
    )
    return env


TEMPLATES = Jinja2Templates(env=_environment())


def page(
    request: Request, name: str, context: dict[str, Any], *, status: int = 200
) -> HTMLResponse:
    """Render one template with the security headers every page carries.

    Text no encoder can write (a lone surrogate stored by an older version) is shown
    as U+FFFD, so one bad row never breaks a page.
    """
    html = TEMPLATES.get_template(name).render({"request": request, **context})
    return HTMLResponse(degrade(html), status_code=status, headers=SECURITY_HEADERS)


def error_page(request: Request, err: ApiError, *, who: str | None = None) -> HTMLResponse:
    """An ApiError as an HTML page with the same status (never JSON on these routes)."""
    context = {
        "title": f"{err.status} {err.code}",
        "error": err,
        "who": who,
        "login_href": "/login?" + urlencode_query({"next": request.url.path}),
    }
    return page(request, "error.html", context, status=err.status)


def _origin(url: str) -> tuple[str, str, int | None] | None:
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        return None


def check_same_origin(request: Request) -> None:
    """Refuse a cross-site POST (CSRF). With the session cookie's SameSite=Lax (a
    cross-site POST does not carry it), this is the guard.

    Browsers send `Origin` (and `Sec-Fetch-Site`) on form POSTs; when either is
    present it must name this origin. A request with neither (curl, scripts with a
    Bearer key) is not a browser being tricked and is let through, unless it carries
    the session cookie.
    """
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        raise ApiError(403, "cross_origin_refused", "Cross-site form posts are refused.")
    source = request.headers.get("origin") or request.headers.get("referer")
    if source is None:
        if fetch_site is None and request.cookies.get(SESSION_COOKIE):
            # A session cookie rides along by itself: a post carrying it must say where
            # it came from (browsers do, on every form post).
            raise ApiError(
                403,
                "cross_origin_refused",
                "A signed-in form post must come from a jobgate page (no Origin or Referer).",
            )
        return
    mine = _origin(str(request.url))
    if source == "null" or _origin(source) != mine:
        raise ApiError(
            403,
            "cross_origin_refused",
            "This form must be posted from the jobgate page it came from.",
        )


async def read_form(request: Request) -> dict[str, str]:
    """An url-encoded form body as single values (the first of each name)."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype not in ("", "application/x-www-form-urlencoded"):
        raise ApiError(
            415, "unsupported_form", "Post the form as application/x-www-form-urlencoded."
        )
    raw = (await request.body()).decode("utf-8", "replace")
    return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}
