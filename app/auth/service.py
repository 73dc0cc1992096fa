"""API keys: minting (shown once, stored hashed), revoking, listing.

A key is `jgk_` followed by 43 URL-safe characters (32 random bytes). Only its
SHA-256 hex and the first characters after `jgk_` are stored.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime

from sqlalchemy.exc import IntegrityError

from app import audit
from app.auth import repository as repo
from app.auth.models import ApiKey, Role
from app.core.db.database import Database

KEY_PREFIX = "jgk_"
DISPLAY_CHARS = 8  # characters after "jgk_" kept for display
# Names become the principal recorded on operations and in history actors
# ("agent:<name>"), so they stay short and plain.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


class KeyCommandError(ValueError):
    """A refused key command (duplicate name, unknown role or name); the CLI exits 2."""


def new_key() -> str:
    """A fresh key: `jgk_` plus `secrets.token_urlsafe(32)` (43 characters)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    """The stored form of a key: its SHA-256 hex."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def display_prefix(key: str) -> str:
    """The first characters after `jgk_`, safe to show and log."""
    return key.removeprefix(KEY_PREFIX)[:DISPLAY_CHARS]


def parse_role(role: str) -> Role:
    try:
        return Role(role)
    except ValueError:
        known = ", ".join(r.value for r in Role)
        raise KeyCommandError(f"unknown role {role!r}; choose one of: {known}") from None


async def create(
    db: Database, name: str, role: str, now: datetime, *, actor: str = "cli"
) -> tuple[ApiKey, str]:
    """Store a new key's hash under `name`; returns the row and the key (never stored)."""
    parsed = parse_role(role)
    if not NAME_PATTERN.fullmatch(name):
        raise KeyCommandError(
            f"invalid name {name!r}: 1-64 characters, letters, digits and . _ @ - "
            "(starting with a letter or digit)"
        )
    key = new_key()
    row = ApiKey(
        name=name,
        role=parsed.value,
        key_hash=hash_key(key),
        key_prefix=display_prefix(key),
        created_at=now,
    )
    duplicate = KeyCommandError(
        f"a key named {name!r} already exists (revoked keys keep their name); choose another name"
    )
    try:
        async with db.transaction() as txn:
            if await repo.by_name(txn, name) is not None:
                raise duplicate
            await repo.insert(txn, row)
            audit.record(
                txn,
                kind="key_created",
                at=now,
                actor=actor,
                payload={"name": name, "role": row.role, "key_prefix": row.key_prefix},
            )
    except IntegrityError as exc:  # a concurrent create with the same name
        raise duplicate from exc
    return row, key


async def revoke(db: Database, name: str, now: datetime, *, actor: str = "cli") -> ApiKey:
    """Revoke the named key at once: the next request that sends it answers 401."""
    async with db.transaction() as txn:
        existing = await repo.by_name(txn, name)
        if existing is None:
            raise KeyCommandError(f"no key named {name!r}")
        if existing.revoked_at is None and await repo.revoke(txn, name, now):
            audit.record(
                txn,
                kind="key_revoked",
                at=now,
                actor=actor,
                payload={"name": name, "role": existing.role, "key_prefix": existing.key_prefix},
            )
        fresh = await repo.by_name(txn, name)
    assert fresh is not None
    return fresh


async def list_keys(db: Database) -> list[ApiKey]:
    async with db.read() as txn:
        return await repo.list_all(txn)
