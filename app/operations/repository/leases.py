"""Leases: claiming due operations, renewing a held lease, the next due time."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.core import queue, telemetry
from app.core.after_commit import on_commit
from app.operations.models import Operation
from app.operations.repository.tables import OPS, Fence
from app.operations.repository.writes import fenced_update


async def claim_due(
    session: AsyncSession,
    *,
    now: datetime,
    owner: str,
    lease_seconds: float,
    limit: int,
    skip_locked: bool,
) -> list[Operation]:
    """Take a lease on up to `limit` due operations (see `core.queue.claim`)."""
    found = await queue.claim(
        session,
        OPS,
        next_column="next_poll_at",
        now=now,
        owner=owner,
        lease_seconds=lease_seconds,
        limit=limit,
        skip_locked=skip_locked,
    )
    if not found:
        return []
    ids = [row.id for row in found]
    takeovers = sum(1 for row in found if row.prior_owner is not None)  # a lease that lapsed
    on_commit(session, lambda: telemetry.claimed(now, [r.due_at for r in found], takeovers))
    rows = await session.execute(
        select(Operation).where(OPS.c.id.in_(ids)).execution_options(populate_existing=True)
    )
    ops = list(rows.scalars())
    ops.sort(key=lambda o: ids.index(o.id))
    return ops


async def renew_lease(
    session: AsyncSession, op_id: str, *, fence: Fence, now: datetime, lease_seconds: float
) -> bool:
    expires = now + timedelta(seconds=lease_seconds)
    return await fenced_update(
        session,
        op_id,
        fence=fence,
        at=now,
        fields={"lease_expires_at": expires, "next_poll_at": expires},
    )


async def release_unstarted(
    session: AsyncSession, op: Operation, *, fence: Fence, now: datetime
) -> bool:
    """Hand back a lease claimed but never worked under: the operation is due now.

    Nothing happened to it, so `updated_at` keeps its value; fenced, so a lease that
    already lapsed and was taken over is left to its new holder.
    """
    return await fenced_update(
        session,
        op.id,
        fence=fence,
        at=op.updated_at,
        fields={"lease_owner": None, "lease_expires_at": None, "next_poll_at": now},
    )


async def next_due_at(session: AsyncSession) -> datetime | None:
    """When the earliest scheduled operation is due (the due index answers it)."""
    value: datetime | None = (
        await session.execute(select(func.min(OPS.c.next_poll_at)))
    ).scalar_one_or_none()
    return value
