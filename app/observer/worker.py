"""The observer loop: claim due operations under a lease, process them, sleep until due.

A thin shell: `tick()` is the unit tests drive with a fake clock; `run()` only
repeats it, waking early when the process learns of new work.
"""

from __future__ import annotations

import asyncio
import logging

from app.core.context import AppContext
from app.operations import repository as repo
from app.operations.driver.runner import process
from app.operations.repository import Fence

log = logging.getLogger(__name__)

CONCURRENCY = 16  # operations processed at once by one observer (provider calls in flight)
# SQLite has one writer: more concurrent steps only queue on its lock (measured by
# bench/observer_scale.py: 16 -> 4 cut the cost per operation by about 40%).
SQLITE_CONCURRENCY = 4
MIN_SLEEP_SECONDS = 0.01  # never spin between ticks


class Observer:
    """One observer: any number of them may share a database."""

    def __init__(self, ctx: AppContext) -> None:
        self.ctx = ctx
        self.batch = ctx.settings.observer_batch
        self.interval = ctx.settings.observer_interval_seconds
        self._sem = asyncio.Semaphore(SQLITE_CONCURRENCY if ctx.db.is_sqlite else CONCURRENCY)
        self._stopping = asyncio.Event()

    async def tick(self) -> int:
        """Claim one batch and process it; returns how many operations were claimed."""
        ctx = self.ctx
        async with ctx.db.transaction() as session:
            ops = await repo.claim_due(
                session,
                now=ctx.now(),
                owner=ctx.worker_id,
                lease_seconds=ctx.lease_seconds,
                limit=self.batch,
                skip_locked=not ctx.db.is_sqlite,
            )

        async def one(op_id: str, token: int) -> None:
            async with self._sem:
                op = next(o for o in ops if o.id == op_id)
                try:
                    await process(ctx, op, Fence(ctx.worker_id, token))
                except Exception:  # one bad operation must not stop the others
                    log.exception("processing %s failed", op_id)

        if ops:
            await asyncio.gather(*(one(op.id, op.lease_token) for op in ops))
        return len(ops)

    async def run(self) -> None:
        """Tick until `stop()`; in-flight work finishes and releases its leases first."""
        notifier = self.ctx.notifier
        while not self._stopping.is_set():
            try:
                n = await self.tick()
            except Exception:
                log.exception("observer tick failed")
                n = 0
            if n >= self.batch:
                continue  # more may be due right now
            notifier.work.clear()
            pause = await self._pause()
            waits = [
                asyncio.ensure_future(notifier.work.wait()),
                asyncio.ensure_future(self._stopping.wait()),
            ]
            _, pending = await asyncio.wait(
                waits, timeout=pause, return_when=asyncio.FIRST_COMPLETED
            )
            for task in pending:
                task.cancel()

    async def _pause(self) -> float:
        """Sleep until the next operation is due, at most one interval."""
        try:
            async with self.ctx.db.transaction() as session:
                due = await repo.next_due_at(session)
        except Exception:
            log.exception("could not read the next due time")
            return self.interval
        if due is None:
            return self.interval
        wait = (due - self.ctx.now()).total_seconds()
        return min(self.interval, max(MIN_SLEEP_SECONDS, wait))

    def stop(self) -> None:
        self._stopping.set()
