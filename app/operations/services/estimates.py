"""Estimates kept fresh for the bodies about to be presented, and the slow jobs.

A route calls `warm` with the operations it is about to present: each provider and kind
not read within `JOBGATE_ESTIMATE_CACHE_SECONDS` is read once (one query), so most body
reads cost no query at all; a success in this process joins the sample when it commits
(`record_successes`). The presenter reads the cache only (`AppContext.estimates`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime

from app.core.db.txn import Txn
from app.operations.context import AppContext
from app.operations.domain.estimate import Estimate, EstimateCache
from app.operations.domain.events import DoneHandler
from app.operations.domain.operation import Operation
from app.operations.domain.states import State, is_done
from app.operations.repository import durations


async def warm(ctx: AppContext, ops: Iterable[Operation]) -> None:
    """Read the durations of each not-done operation's provider and kind, when stale."""
    settings = ctx.settings
    now = time.monotonic()
    wanted = {
        (o.provider, o.kind)
        for o in ops
        if not is_done(o.state)
        and ctx.estimates.stale(o.provider, o.kind, now=now, ttl=settings.estimate_cache_seconds)
    }
    if not wanted:
        return
    async with ctx.db.read() as txn:
        for provider, kind in sorted(wanted):
            seen = await durations.recent_durations(
                txn, provider, kind, limit=settings.estimate_jobs
            )
            ctx.estimates.put(provider, kind, seen, now=now)


def record_successes(cache: EstimateCache) -> DoneHandler:
    """A done handler (`AppContext.on_done`): a full success in this process adds its
    duration to the cached sample once its transaction commits (no query); other
    processes' successes are read at the end of the cache period."""

    async def record(txn: Txn, op: Operation, state: State, now: datetime) -> None:
        if state != State.SUCCEEDED or op.outcome not in (None, "succeeded"):
            return
        seconds = (now - op.created_at).total_seconds()
        provider, kind = op.provider, op.kind
        txn.on_commit(lambda: cache.record(provider, kind, seconds))

    return record


def estimate_for(ctx: AppContext, op: Operation) -> Estimate | None:
    """The cached estimate for this operation's provider and kind (None: too few jobs,
    or not read yet)."""
    return ctx.estimates.peek(op.provider, op.kind)


def slow_why(op: Operation, estimate: Estimate) -> str:
    """The attention inbox's `why` of a slow job."""
    return (
        f"running longer than 90% of similar jobs (p90 {estimate.p90:.1f} s, from "
        f"{estimate.based_on} earlier {op.provider}/{op.kind} jobs)"
    )


async def slow_jobs(
    ctx: AppContext, *, principal: str | None, limit: int
) -> list[tuple[Operation, str]]:
    """In-flight operations past the p90 of their provider and kind, oldest first."""
    async with ctx.db.read() as txn:
        ops = await durations.in_flight(txn, principal=principal, limit=max(limit, 200))
    await warm(ctx, ops)
    now = ctx.now()
    found: list[tuple[Operation, str]] = []
    for op in ops:
        est = estimate_for(ctx, op)
        if est is not None and est.slow((now - op.created_at).total_seconds()):
            found.append((op, slow_why(op, est)))
    return found[:limit]
