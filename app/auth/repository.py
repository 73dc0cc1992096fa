"""All SQL about API keys. Functions flush, never commit."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update

from app.auth.models import ApiKey
from app.core.db.row_table import table_of
from app.core.db.txn import Txn

KEYS = table_of(ApiKey)


async def insert(txn: Txn, key: ApiKey) -> None:
    txn.add(key)
    await txn.flush()


async def by_name(txn: Txn, name: str) -> ApiKey | None:
    key: ApiKey | None = (
        await txn.execute(select(ApiKey).where(KEYS.c.name == name))
    ).scalar_one_or_none()
    return key


async def active_by_hash(txn: Txn, key_hash: str) -> ApiKey | None:
    """The unrevoked key with this hash, if any."""
    stmt = select(ApiKey).where(KEYS.c.key_hash == key_hash, KEYS.c.revoked_at.is_(None))
    key: ApiKey | None = (await txn.execute(stmt)).scalar_one_or_none()
    return key


async def list_all(txn: Txn) -> list[ApiKey]:
    stmt = select(ApiKey).order_by(KEYS.c.created_at, KEYS.c.id)
    return list((await txn.execute(stmt)).scalars())


async def revoke(txn: Txn, name: str, at: datetime) -> bool:
    """Revoke the named key; False when there is no such unrevoked key."""
    stmt = (
        update(KEYS).where(KEYS.c.name == name, KEYS.c.revoked_at.is_(None)).values(revoked_at=at)
    )
    result = await txn.execute(stmt)
    return result.rowcount == 1
