"""All SQL of provider webhooks. Functions flush or execute, never commit."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.operations.models import Operation
from app.webhooks.models import WebhookEvent

OPS = Operation.__table__  # type: ignore[attr-defined]
EVENTS = WebhookEvent.__table__  # type: ignore[attr-defined]


async def insert_if_absent(session: AsyncSession, table: Any, values: dict[str, Any]) -> bool:
    """`INSERT ... ON CONFLICT DO NOTHING RETURNING id`; False when a unique key existed.

    A conflict is the expected outcome of a duplicate, not an error: raising and
    catching IntegrityError would abort the surrounding PostgreSQL transaction.
    RETURNING tells the two apart on every driver (rowcount is -1 with it on psycopg).
    """
    dialect = session.get_bind().dialect.name
    module: Any = postgresql if dialect == "postgresql" else sqlite
    stmt = module.insert(table).values(**values).on_conflict_do_nothing()
    result = await session.execute(stmt.returning(table.c.id))
    return result.first() is not None


async def operation_for_job(
    session: AsyncSession, provider: str, remote_job_id: str
) -> Operation | None:
    """The operation that owns this remote job (oldest first if, wrongly, several do)."""
    stmt = (
        select(Operation)
        .where(OPS.c.provider == provider, OPS.c.remote_job_id == remote_job_id)
        .order_by(OPS.c.created_at)
        .limit(1)
        .execution_options(populate_existing=True)
    )
    return (await session.execute(stmt)).scalar_one_or_none()


async def record_event(session: AsyncSession, **values: Any) -> bool:
    """Insert the event row; False when this (provider, event id) was already recorded."""
    return await insert_if_absent(session, EVENTS, values)


async def poll_now(session: AsyncSession, op_id: str, *, now: datetime, reason: str) -> bool:
    """Make the operation due now, if automation still runs it and nobody holds it.

    A NULL `next_poll_at` means the gateway has nothing more to do (done): a late
    webhook must not revive it. A live lease means its holder will read the status
    soon anyway, and its own schedule write would overwrite ours.
    """
    stmt = (
        update(OPS)
        .where(
            OPS.c.id == op_id,
            OPS.c.next_poll_at.is_not(None),
            OPS.c.next_poll_at > now,
            or_(OPS.c.lease_expires_at.is_(None), OPS.c.lease_expires_at <= now),
        )
        .values(next_poll_at=now, next_poll_reason=reason[:200])
    )
    result = await session.execute(stmt)
    return result.rowcount == 1  # type: ignore[attr-defined,no-any-return]
