"""Who is calling: the API key in `Authorization: Bearer <key>`, or `dev` in dev mode.

Keys are looked up by their SHA-256 on every request (no cache beyond the request,
so a revoke takes effect on the next call). The key itself is never logged or stored.
`JOBGATE_AUTH=dev` maps every caller to the admin principal `dev`.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.auth import repository as repo
from app.auth import sessions
from app.auth.models import Role
from app.auth.service import KEY_PREFIX, hash_key
from app.core.http.errors import ApiError

DEV_PRINCIPAL = "dev"
MAX_KEY_CHARS = 256  # anything longer is not one of our keys; not worth hashing
_STATE_ATTR = "jobgate_principal"  # per-request cache on request.state

# Documents the scheme in OpenAPI; parsing and errors stay ours (one error shape).
_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    description="An API key from `jobgate keys create`, sent as `Authorization: Bearer <key>`.",
)


@dataclass(frozen=True)
class Principal:
    """The authenticated caller: its name (recorded on operations) and its role."""

    name: str
    role: Role

    @property
    def is_operator(self) -> bool:
        """Operators and admins see every operation, cancel any and resolve."""
        return self.role in (Role.OPERATOR, Role.ADMIN)

    @property
    def owner_filter(self) -> str | None:
        """The principal to filter lists by; None means every operation."""
        return None if self.is_operator else self.name

    def may_see(self, owner: str) -> bool:
        return self.is_operator or owner == self.name


DEV = Principal(DEV_PRINCIPAL, Role.ADMIN)


async def authenticate(
    request: Request, *, allow_basic: bool = False, allow_session: bool = False
) -> Principal:
    """The caller, or ApiError 401 `unauthorized`. `allow_basic` also reads the key from
    HTTP Basic (the password), and `allow_session` the session cookie a person got at
    `/login`: both only for the operator pages, never for the API."""
    cached = getattr(request.state, _STATE_ATTR, None)
    if isinstance(cached, Principal):
        return cached
    if request.app.state.settings.auth == "dev":
        found = DEV
    else:
        found = await _from_key(request, allow_basic=allow_basic, allow_session=allow_session)
    setattr(request.state, _STATE_ATTR, found)
    return found


AGENT_HINT = (
    "An API key is required: send 'Authorization: Bearer <key>' (create one with "
    "`jobgate keys create --name NAME --role agent` for an agent, `--role operator` for a "
    "person or `jobgate ops`)."
)
PAGE_HINT = (
    "Sign in at /login with an operator key (create one with "
    "`jobgate keys create --name NAME --role operator`)."
)


async def _from_key(request: Request, *, allow_basic: bool, allow_session: bool) -> Principal:
    key = presented_key(request.headers.get("authorization", ""), allow_basic=allow_basic)
    if key is None and allow_session:
        token = request.cookies.get(sessions.COOKIE)
        if token:
            ctx = request.app.state.ctx
            signed = await sessions.lookup(ctx.db, token, ctx.now())
            if signed is None:
                raise ApiError(
                    401,
                    "unauthorized",
                    "Your sign-in has ended (it expired, you logged out, or the key was "
                    "revoked): sign in again at /login.",
                )
            return Principal(signed.name, signed.role)
    if key is None:
        raise ApiError(401, "unauthorized", PAGE_HINT if allow_session else AGENT_HINT)
    found = await _lookup(request, key)
    if found is None:
        raise ApiError(
            401, "unauthorized", "The API key is not valid: it is unknown or was revoked."
        )
    return found


def presented_key(header: str, *, allow_basic: bool) -> str | None:
    """The key in an Authorization header value (Bearer; Basic password when allowed)."""
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer":
        key = value
    elif scheme.lower() == "basic" and allow_basic:
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        user, _, password = decoded.partition(":")
        key = password or user  # the key as password; a key typed as the user name works too
    else:
        return None
    return key or None


async def _lookup(request: Request, key: str) -> Principal | None:
    if not key.startswith(KEY_PREFIX) or len(key) > MAX_KEY_CHARS:
        return None
    async with request.app.state.ctx.db.read() as txn:
        row = await repo.active_by_hash(txn, hash_key(key))
    if row is None:
        return None
    return Principal(row.name, Role(row.role))


async def caller(
    request: Request,
    _doc: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """Dependency: the authenticated caller (name and role)."""
    return await authenticate(request)


def require_operator(who: Principal) -> Principal:
    """The caller if it is an operator or admin; otherwise ApiError 403 `forbidden`."""
    if not who.is_operator:
        raise ApiError(
            403,
            "forbidden",
            f"This needs an operator or admin key; {who.name!r} has role {who.role.value}.",
        )
    return who


async def operator(who: Annotated[Principal, Depends(caller)]) -> Principal:
    """Dependency: the caller, who must be an operator or admin (403 otherwise)."""
    return require_operator(who)


async def principal(who: Annotated[Principal, Depends(caller)]) -> str:
    """Dependency: the calling principal's name; idempotency keys are scoped to it."""
    return who.name
