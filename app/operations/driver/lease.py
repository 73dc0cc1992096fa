"""The lease a step runs under: renewed before a step when half of it is gone, and at
half-life while a step waits on a slow provider (the heartbeat).

The lease is what lets only one process step an operation; its token fences every
write (app/operations/repository/leases.py holds the SQL). A renewal that fails
because the database is away is logged and tried again at the next beat: the step's
answer must still come back (and may be kept, `write.apply`). A renewal refused by the
fence means the lease was lost: the heartbeat stops, and whatever the step then writes
is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable
from datetime import timedelta
from typing import TypeVar

from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.repository import Fence, Witness

log = logging.getLogger(__name__)

T = TypeVar("T")


async def ensure(ctx: AppContext, op: Operation, fence: Fence) -> bool:
    """Renew at half-life so a long chain of steps never outlives its lease."""
    if left(ctx, op) > ctx.lease_seconds / 2:
        return True
    return await renew(ctx, op, fence)


async def renew(ctx: AppContext, op: Operation, fence: Fence) -> bool:
    """Extend the lease by a full term, under the fence; False if it was lost.

    A holder that writes nothing between two polls (app/operations/driver/write.py) learns
    here, at the latest, what another writer changed meanwhile (a cancel intent from
    another process whose notification was lost, an operator): `op` is then read afresh."""
    now = ctx.now()
    async with ctx.db.transaction() as txn:
        seen = await repo.renew_lease(
            txn, op.id, fence=fence, now=now, lease_seconds=ctx.lease_seconds
        )
        fresh = None
        if seen is not None and seen != Witness.of(op):
            fresh = await repo.get(txn, op.id)
    if seen is None:
        return False
    if fresh is not None:
        refresh(op, fresh)
    op.lease_expires_at = now + timedelta(seconds=ctx.lease_seconds)
    return True


def refresh(op: Operation, fresh: Operation) -> None:
    """`op` as the row now holds it (what another writer changed included)."""
    for f in dataclasses.fields(Operation):
        setattr(op, f.name, getattr(fresh, f.name))


def left(ctx: AppContext, op: Operation) -> float:
    """Seconds of lease left, as this process last wrote it (0 without one)."""
    if op.lease_expires_at is None:
        return 0.0
    return (op.lease_expires_at - ctx.now()).total_seconds()


async def beating(ctx: AppContext, op: Operation, fence: Fence, work: Awaitable[T]) -> T:
    """Await `work` (one step) while the lease is renewed at half-life, however slow
    the provider is."""

    async def heartbeat() -> None:
        while True:
            await ctx.clock.sleep(ctx.lease_seconds / 2)  # the fake clock in tests
            try:
                renewed = await renew(ctx, op, fence)
            except Exception:  # the database away: the step's answer must still come back
                log.warning("could not renew the lease on %s", op.id, exc_info=True)
                continue
            if not renewed:
                return  # lost: whatever the step then writes is refused by the fence

    beat = asyncio.create_task(heartbeat())
    try:
        return await work
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
