"""Sign-in for people in keys mode: `/login` takes an operator key once, `/logout` ends it.

A person types the key into the one field of the login form; the gateway checks it
(unrevoked, operator or admin: an agent key is refused, agents keep their Bearer key),
stores a session (only its token's hash, app/auth/sessions.py) and sets a cookie:
HttpOnly, SameSite=Lax, Secure when the page was served over https, expiring with the
session. Every form POST is checked for this origin as before, and one that carries the
cookie must say where it came from (docs/security.md, "Signing in").
"""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from app.auth import deps, sessions
from app.auth.models import Role
from app.auth.service import KEY_PREFIX, hash_key
from app.core.http.errors import ApiError, DomainError, as_api_error
from app.views.render import check_same_origin, page, read_form

router = APIRouter(include_in_schema=False)

HOME = "/operations"
MAX_KEY_CHARS = deps.MAX_KEY_CHARS


def safe_next(target: str) -> str:
    """Where to go after signing in: a page of this gateway's view, never another site."""
    if target.startswith(("/operations", "/dashboard")) and "\\" not in target:
        return target
    return HOME


def login_url(path: str) -> str:
    """The sign-in page that returns to `path` afterwards."""
    return "/login?" + urlencode({"next": safe_next(path)})


def _form(
    request: Request, *, next_url: str, error: ApiError | None = None, status: int = 200
) -> HTMLResponse:
    context = {
        "title": "Sign in",
        "who": None,
        "next": safe_next(next_url),
        "error": error,
        "dev": request.app.state.settings.auth == "dev",
    }
    return page(request, "login.html", context, status=status)


@router.get("/login", response_class=HTMLResponse)
async def login_page(request: Request, next: str = HOME) -> HTMLResponse:  # noqa: A002
    """The sign-in form: one field, the operator key."""
    return _form(request, next_url=next)


@router.post("/login", response_class=HTMLResponse)
async def login_action(request: Request) -> Response:
    """Check the key once; a session cookie stands for it from now on."""
    settings = request.app.state.settings
    try:
        check_same_origin(request)
        form = await read_form(request)
        target = safe_next(form.get("next", HOME))
        if settings.auth == "dev":  # no keys: every caller is the admin dev already
            return RedirectResponse(target, status_code=303)
        key = form.get("key", "").strip()
        if not key:
            raise ApiError(422, "invalid_request", "Type or paste an operator key.")
        row = None
        if key.startswith(KEY_PREFIX) and len(key) <= MAX_KEY_CHARS:
            row = await sessions.key_for_login(request.app.state.ctx.db, hash_key(key))
        if row is None:
            raise ApiError(401, "unauthorized", "That key is not valid: unknown or revoked.")
        if Role(row.role) == Role.AGENT:
            raise ApiError(
                403,
                "forbidden",
                f"{row.name!r} is an agent key: these pages need an operator or admin key "
                "(`jobgate keys create --name NAME --role operator`). Agents keep sending "
                "theirs as 'Authorization: Bearer <key>'.",
            )
    except (ApiError, DomainError) as exc:
        err = as_api_error(exc)
        return _form(request, next_url=HOME, error=err, status=err.status)
    ctx = request.app.state.ctx
    token = await sessions.start(ctx.db, row, ctx.now(), settings.session_seconds)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        sessions.COOKIE,
        token,
        max_age=int(settings.session_seconds),
        path="/",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="lax",
    )
    return response


@router.post("/logout", response_class=HTMLResponse)
async def logout_action(request: Request) -> Response:
    """End this browser's session (its row and its cookie), then show the sign-in form."""
    try:
        check_same_origin(request)
    except ApiError as err:
        return _form(request, next_url=HOME, error=err, status=err.status)
    token = request.cookies.get(sessions.COOKIE)
    if token:
        ctx = request.app.state.ctx
        await sessions.end(ctx.db, token, ctx.now())
    response = RedirectResponse("/login?" + urlencode({"done": "logout"}), status_code=303)
    response.delete_cookie(
        sessions.COOKIE, path="/", secure=request.url.scheme == "https", httponly=True,
        samesite="lax",
    )  # fmt: skip
    return response
