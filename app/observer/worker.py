"""The observer loop: claim due operations under a lease, process them, sleep until due.

A thin shell around `runner.process`. `tick()` claims one batch and processes all
of it; the unit tests drive it with a fake clock. `run()` is a pipeline instead:
it keeps up to `slots` operations in progress and a small buffer of claimed ones
behind them, and claims again as soon as the buffer runs low, so work that falls
due while a batch is in progress waits for a free slot, never for the whole batch
(issue 11: polls due 10 ms apart were 0.9-1.6 s apart behind batch ticks).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque

from app.core.context import AppContext
from app.operations import repository as repo
from app.operations.driver.runner import process
from app.operations.models import Operation
from app.operations.repository import Fence

log = logging.getLogger(__name__)

CONCURRENCY = 16  # operations processed at once by one observer (provider calls in flight)
# SQLite has one writer: more concurrent steps only queue on its lock (measured by
# bench/observer_scale.py: 16 -> 4 cut the cost per operation by about 40%).
SQLITE_CONCURRENCY = 4
# Claimed operations held per slot (in progress plus buffered). 2 claims again when
# half are left: one claim transaction per `slots` steps, never one per step, and a
# process holds leases on at most 2 x slots due operations that others could take.
HELD_PER_SLOT = 2
MIN_SLEEP_SECONDS = 0.01  # never spin between claims


class Observer:
    """One observer: any number of them may share a database."""

    def __init__(self, ctx: AppContext) -> None:
        self.ctx = ctx
        self.batch = ctx.settings.observer_batch
        self.interval = ctx.settings.observer_interval_seconds
        self.slots = SQLITE_CONCURRENCY if ctx.db.is_sqlite else CONCURRENCY
        self._sem = asyncio.Semaphore(self.slots)
        self._stopping = asyncio.Event()
        self._freed = asyncio.Event()  # a step finished: a slot is free

    async def _claim(self, limit: int) -> list[Operation]:
        ctx = self.ctx
        async with ctx.db.transaction() as session:
            return await repo.claim_due(
                session,
                now=ctx.now(),
                owner=ctx.worker_id,
                lease_seconds=ctx.lease_seconds,
                limit=limit,
                skip_locked=not ctx.db.is_sqlite,
            )

    async def _process(self, op: Operation) -> None:
        try:
            await process(self.ctx, op, Fence(self.ctx.worker_id, op.lease_token))
        except Exception:  # one bad operation must not stop the others
            log.exception("processing %s failed", op.id)

    async def tick(self) -> int:
        """Claim one batch and process it; returns how many operations were claimed."""
        ops = await self._claim(self.batch)

        async def one(op: Operation) -> None:
            async with self._sem:
                await self._process(op)

        if ops:
            await asyncio.gather(*(one(op) for op in ops))
        return len(ops)

    async def run(self) -> None:
        """Process due work until `stop()`; in-flight work finishes first, and the leases
        of claimed operations not started yet are handed back (due at once)."""
        held = self.slots * HELD_PER_SLOT
        buffer: deque[Operation] = deque()
        running: set[asyncio.Task[None]] = set()

        def start_some() -> None:
            while buffer and len(running) < self.slots:
                task = asyncio.create_task(self._process(buffer.popleft()))
                running.add(task)
                task.add_done_callback(finished)

        def finished(task: asyncio.Task[None]) -> None:
            running.discard(task)
            self._freed.set()

        try:
            while not self._stopping.is_set():
                self._freed.clear()
                self.ctx.notifier.work.clear()
                start_some()
                if len(running) + len(buffer) > self.slots:
                    await self._wait(pause=None)  # more than half held: wait for a slot
                    continue
                want = min(held - len(running) - len(buffer), self.batch)
                try:
                    ops = await self._claim(want)
                except Exception:
                    log.exception("observer claim failed")
                    ops = []
                buffer.extend(ops)
                if len(ops) == want:
                    continue  # more may be due right now
                start_some()
                await self._wait(pause=await self._pause())
        finally:
            await self._hand_back(buffer)
            if running:
                await asyncio.gather(*running, return_exceptions=True)

    async def _wait(self, *, pause: float | None) -> None:
        """Until a slot frees, new work is announced, `stop()`, or `pause` passes."""
        waits = [
            asyncio.ensure_future(self._freed.wait()),
            asyncio.ensure_future(self.ctx.notifier.work.wait()),
            asyncio.ensure_future(self._stopping.wait()),
        ]
        try:
            await asyncio.wait(waits, timeout=pause, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waits:
                task.cancel()

    async def _hand_back(self, ops: deque[Operation]) -> None:
        """Release claimed operations that were never started, so they are due now."""
        if not ops:
            return
        ctx = self.ctx
        with contextlib.suppress(Exception):  # they fall due anyway when the lease lapses
            async with ctx.db.transaction() as session:
                for op in ops:
                    fence = Fence(ctx.worker_id, op.lease_token)
                    await repo.release_unstarted(session, op, fence=fence, now=ctx.now())

    async def _pause(self) -> float:
        """Sleep until the next operation is due, at most one interval."""
        try:
            async with self.ctx.db.read() as session:
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
