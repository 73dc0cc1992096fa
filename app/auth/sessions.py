"""Sign-in for people: an operator key presented once at `/login` becomes a session.

The browser keeps only a cookie holding the session's token (`jgs_` plus 43 URL-safe
characters); the database keeps only the token's SHA-256, the key it stands for, and
when it ends. A session ends at `expires_at` (`JOBGATE_SESSION_SECONDS` after sign-in),
at a logout, or when its key is revoked: every lookup joins the key and reads the
database's clock, so none of these waits for anything (docs/security.md, "Signing in").
Agents never use sessions: the API reads only `Authorization: Bearer`.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update

from app import audit
from app.auth import repository as keys_repo
from app.auth.models import ApiKey, OperatorSession, Role
from app.core.db.database import Database
from app.core.db.row_table import table_of

TOKEN_PREFIX = "jgs_"
MAX_TOKEN_CHARS = 256  # anything longer is not one of our tokens; not worth hashing
COOKIE = "jobgate_session"
SESSIONS = table_of(OperatorSession)
KEYS = table_of(ApiKey)


@dataclass(frozen=True)
class Signed:
    """Who a session stands for: the key's name and role."""

    name: str
    role: Role


def hash_token(token: str) -> str:
    """The stored form of a session token: its SHA-256 hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


async def start(db: Database, key: ApiKey, now: datetime, seconds: float) -> str:
    """A new session for `key`, ending `seconds` from `now`; returns its token (the only
    copy: it goes into the cookie)."""
    assert key.id is not None
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = OperatorSession(
        token_hash=hash_token(token),
        key_id=key.id,
        created_at=now,
        expires_at=now + timedelta(seconds=seconds),
    )
    async with db.transaction() as txn:
        txn.add(row)
        await txn.flush()
        audit.record(
            txn,
            kind="session_started",
            at=now,
            actor=f"operator:{key.name}",
            payload={"name": key.name, "role": key.role, "expires_at": row.expires_at.isoformat()},
        )
    return token


async def key_for_login(db: Database, key_hash: str) -> ApiKey | None:
    """The unrevoked key a person typed at `/login`, if any."""
    async with db.read() as txn:
        return await keys_repo.active_by_hash(txn, key_hash)


async def lookup(db: Database, token: str, now: datetime) -> Signed | None:
    """The live session's key, or None: unknown, expired, logged out, or key revoked."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > MAX_TOKEN_CHARS:
        return None
    stmt = (
        select(KEYS.c.name, KEYS.c.role)
        .select_from(SESSIONS.join(KEYS, SESSIONS.c.key_id == KEYS.c.id))
        .where(
            SESSIONS.c.token_hash == hash_token(token),
            SESSIONS.c.ended_at.is_(None),
            SESSIONS.c.expires_at > now,
            KEYS.c.revoked_at.is_(None),
        )
    )
    async with db.read() as txn:
        row = (await txn.execute(stmt)).first()
    return None if row is None else Signed(str(row.name), Role(row.role))


async def end(db: Database, token: str, now: datetime) -> bool:
    """Log out: the session ends now; False when it was not live."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > MAX_TOKEN_CHARS:
        return False
    live = SESSIONS.c.token_hash == hash_token(token), SESSIONS.c.ended_at.is_(None)
    whose = (
        select(KEYS.c.name)
        .select_from(SESSIONS.join(KEYS, SESSIONS.c.key_id == KEYS.c.id))
        .where(*live)
    )
    async with db.transaction() as txn:
        name = (await txn.execute(whose)).scalar_one_or_none()
        if name is None:
            return False
        await txn.execute(update(SESSIONS).where(*live).values(ended_at=now))
        audit.record(
            txn, kind="session_ended", at=now, actor=f"operator:{name}", payload={"name": name}
        )
    return True
