"""All SQL about API keys. Functions flush, never commit."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.models import ApiKey

KEYS = ApiKey.__table__  # type: ignore[attr-defined]


async def insert(session: AsyncSession, key: ApiKey) -> None:
    session.add(key)
    await session.flush()


async def by_name(session: AsyncSession, name: str) -> ApiKey | None:
    stmt = select(ApiKey).where(KEYS.c.name == name).execution_options(populate_existing=True)
    return (await session.execute(stmt)).scalar_one_or_none()


async def active_by_hash(session: AsyncSession, key_hash: str) -> ApiKey | None:
    """The unrevoked key with this hash, if any."""
    stmt = select(ApiKey).where(KEYS.c.key_hash == key_hash, KEYS.c.revoked_at.is_(None))
    return (await session.execute(stmt)).scalar_one_or_none()


async def list_all(session: AsyncSession) -> list[ApiKey]:
    stmt = select(ApiKey).order_by(KEYS.c.created_at, KEYS.c.id)
    return list((await session.execute(stmt)).scalars())


async def revoke(session: AsyncSession, name: str, at: datetime) -> bool:
    """Revoke the named key; False when there is no such unrevoked key."""
    stmt = (
        update(KEYS).where(KEYS.c.name == name, KEYS.c.revoked_at.is_(None)).values(revoked_at=at)
    )
    result = await session.execute(stmt)
    return result.rowcount == 1  # type: ignore[attr-defined,no-any-return]
