"""The observer loop: claim due operations under a lease, process them, sleep until due.

A thin shell around `runner.process`. `run()` is a pipeline: it keeps up to `slots`
operations in progress and a small buffer of claimed ones behind them, and claims again
as soon as the buffer runs low, so work that falls due while a batch is in progress
waits for a free slot, never for the whole batch (docs/performance.md: polls due 10 ms
apart were 0.9-1.6 s apart behind batch ticks). `run(until_idle=True)` is the same loop
that returns once nothing is due: the tests drive it on a fake clock, so what they test
is the loop production runs.

While `run()` runs, the observer is also the process's `Holder` (app/operations/hold.py): a
step whose next poll is due within `observer_hold_seconds` keeps its lease and comes
back here, on a timer, instead of to the queue. A held operation is stepped again
without a claim and without a read: what another writer records about it (a cancel
intent, an operator's decision) wakes it here, from this process or, on PostgreSQL, by
notification from another (`changed`), and it is then read afresh before its step; a
lost notification is caught when the lease is renewed (app/operations/driver/lease.py).
It claims again only when work was announced or the queue's next due time has come,
not after every step: an empty claim is a write transaction on SQLite.

An observer whose clock is too far from the database's claims nothing at all
(app/core/db/db_clock.py; docs/operations.md, "Clocks").
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
from collections import deque
from datetime import datetime
from typing import Any

from app.core.obs import telemetry
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.driver.runner import process
from app.operations.repository import Fence
from app.retention.prune import Plan, prune_step

log = logging.getLogger(__name__)

CONCURRENCY = 16  # operations processed at once by one observer (provider calls in flight)
# SQLite has one writer: more concurrent steps only queue on its lock (measured by
# bench/observer_scale.py: 16 -> 4 cut the cost per operation by about 40%).
SQLITE_CONCURRENCY = 4
# Claimed operations held per slot (in progress plus buffered). 2 claims again when
# half are left: one claim transaction per `slots` steps, never one per step, and a
# process holds leases on at most 2 x slots due operations that others could take.
CLAIMED_PER_SLOT = 2
MIN_SLEEP_SECONDS = 0.01  # never spin between claims
WAITING_POLLS_PER_SLOT = 8  # polls held between steps (app/operations/hold.py), per slot


class Observer:
    """One observer: any number of them may share a database."""

    def __init__(self, ctx: AppContext) -> None:
        self.ctx = ctx
        self.batch = ctx.settings.observer_batch
        self.interval = ctx.settings.observer_interval_seconds
        self.slots = SQLITE_CONCURRENCY if ctx.db.is_sqlite else CONCURRENCY
        self._stopping = asyncio.Event()
        self._freed = asyncio.Event()  # a step finished, or a poll was held: look again
        self._held: list[tuple[datetime, int, Operation, Fence]] = []  # a heap by due time
        self._stale: set[str] = set()  # held ids another writer changed: read before stepping
        self._seq = itertools.count()
        self._hold_limit = 0  # holding is on only while run() runs
        self._claim_at = 0.0  # loop time of the next claim, unless work is announced sooner
        self._prune_at = 0.0  # loop time of the next prune step (docs/operations.md)

    async def _claim(self, limit: int) -> list[Operation]:
        ctx = self.ctx
        if ctx.clock_health.refusal():  # logged where it was measured (app/core/db/db_clock.py)
            return []  # what it holds already runs out under its leases
        async with ctx.db.transaction() as txn:
            return await repo.claim_due(
                txn,
                now=ctx.now(),
                owner=ctx.worker_id,
                lease_seconds=ctx.lease_seconds,
                limit=limit,
                skip_locked=not ctx.db.is_sqlite,
            )

    async def _process(self, op: Operation, fence: Fence | None = None) -> None:
        hold = self if self._hold_limit else None
        fence = fence or Fence(self.ctx.worker_id, op.lease_token)
        try:
            await process(self.ctx, op, fence, hold)
        except Exception:  # one bad operation must not stop the others
            log.exception("processing %s failed", op.id)

    async def _resume(self, op: Operation, fence: Fence, stale: bool) -> None:
        """Step a held operation again: as held, or read afresh if another writer changed
        it meanwhile (and left alone if its lease is no longer ours)."""
        if stale:
            try:
                async with self.ctx.db.read() as txn:
                    fresh = await repo.get(txn, op.id)
            except Exception:
                log.exception("could not read held %s again; its lease will lapse", op.id)
                return
            if fresh is None or (fresh.lease_owner, fresh.lease_token) != (
                fence.owner,
                fence.token,
            ):
                log.info("the lease on held %s is gone; leaving it", op.id)
                return
            op = fresh
        await self._process(op, fence)

    # The Holder protocol (app/operations/hold.py).
    def accepts(self, delay: float) -> bool:
        return len(self._held) < self._hold_limit and not self._stopping.is_set()

    def take(self, op: Operation, fence: Fence, due: datetime) -> None:
        heapq.heappush(self._held, (due, next(self._seq), op, fence))
        self._freed.set()

    def released(self, due: datetime) -> None:
        loop_due = self._loop_time() + max(0.0, (due - self.ctx.now()).total_seconds())
        self._claim_at = min(self._claim_at, loop_due)
        self._freed.set()

    def holds(self, op_id: str) -> bool:
        return any(entry[2].id == op_id for entry in self._held)

    def wake(self, op_id: str) -> None:
        now = self.ctx.now()
        for i, (due, seq, op, fence) in enumerate(self._held):
            if op.id == op_id:
                self._stale.add(op_id)
                self._held[i] = (min(due, now), seq, op, fence)
                heapq.heapify(self._held)
                self._freed.set()
                return

    def changed(self, op_id: str, version: int | None) -> None:
        """Another process wrote `op_id` (a notification; `version`: the one it wrote, if a
        transition): if held here and not by this holder's own write (which comes back with
        a version it already has: several transitions of one write bring each), read it
        afresh."""
        for _, _, op, _ in self._held:
            if op.id == op_id and (version is None or version > op.version):
                self.wake(op_id)
                return

    def _loop_time(self) -> float:
        return asyncio.get_running_loop().time()

    async def run(self, *, until_idle: bool = False) -> int:
        """Process due work until `stop()`; in-flight work finishes first, and the leases
        of claimed or held operations not started yet are handed back. With `until_idle`,
        claim on every pass and return once a claim finds nothing and nothing started or
        held is due now. Returns how many steps it started."""
        held_claims = self.slots * CLAIMED_PER_SLOT
        buffer: deque[Operation] = deque()
        running: set[asyncio.Task[None]] = set()
        started = 0

        def launch(work: Any) -> None:
            nonlocal started
            started += 1
            task = asyncio.create_task(work)
            running.add(task)
            task.add_done_callback(finished)

        def finished(task: asyncio.Task[None]) -> None:
            running.discard(task)
            self._freed.set()

        def start_some() -> None:
            now = self.ctx.now()
            due_now: list[tuple[Operation, Fence]] = []
            while (
                self._held and self._held[0][0] <= now and len(running) + len(due_now) < self.slots
            ):
                due, _, op, fence = heapq.heappop(self._held)
                telemetry.held_poll(now, due)
                due_now.append((op, fence))
            for op, fence in due_now:
                stale = op.id in self._stale
                self._stale.discard(op.id)
                launch(self._resume(op, fence, stale))
            while buffer and len(running) < self.slots:
                launch(self._process(buffer.popleft()))

        holding = self.ctx.settings.observer_hold_seconds > 0
        self._hold_limit = self.slots * WAITING_POLLS_PER_SLOT if holding else 0
        self.ctx.holder = self if self._hold_limit else None
        self.ctx.notifier.on_due = self.released  # another process released one
        self.ctx.notifier.on_change = self.changed  # another process wrote one
        self._claim_at = self._loop_time()
        self._prune_at = self._loop_time() + self.ctx.settings.prune_interval_seconds
        try:
            while not self._stopping.is_set():
                self._freed.clear()
                if until_idle:
                    self._claim_at = self._loop_time()
                announced = self.ctx.notifier.work.is_set()
                self.ctx.notifier.work.clear()
                start_some()
                room = len(running) + len(buffer) <= self.slots  # at most half held
                if room and (announced or self._loop_time() >= self._claim_at):
                    want = min(held_claims - len(running) - len(buffer), self.batch)
                    try:
                        ops = await self._claim(want)
                    except Exception:
                        log.exception("observer claim failed")
                        ops = []
                    buffer.extend(ops)
                    if len(ops) == want:
                        continue  # more may be due right now
                    self._claim_at = self._loop_time() + await self._pause()
                    await self._prune_if_due()
                    start_some()
                    if until_idle and not running and not buffer and not self._held_due():
                        break
                await self._wait(pause=self._sleep(room, len(running) < self.slots))
        finally:
            self.ctx.holder = None
            self.ctx.notifier.on_due = None
            self.ctx.notifier.on_change = None
            self._hold_limit = 0
            now = self.ctx.now()
            claimed = [(op, Fence(self.ctx.worker_id, op.lease_token), now) for op in buffer]
            await self._hand_back(claimed + self._take_held())
            if running:
                await asyncio.gather(*running, return_exceptions=True)
            # A step that was deciding as we stopped may have handed us its next poll.
            await self._hand_back(self._take_held())
        return started

    def _held_due(self) -> bool:
        return bool(self._held) and self._held[0][0] <= self.ctx.now()

    def _sleep(self, room: bool, free_slot: bool) -> float | None:
        """How long the loop may sleep: until the next claim or held poll it can start."""
        times = []
        if room:
            times.append(self._claim_at - self._loop_time())
        if free_slot and self._held:
            times.append((self._held[0][0] - self.ctx.now()).total_seconds())
        if not times:
            return None  # every slot busy: a finished step wakes the loop
        return max(MIN_SLEEP_SECONDS, min(times))

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

    def _take_held(self) -> list[tuple[Operation, Fence, datetime]]:
        now = self.ctx.now()
        self._stale.clear()
        held = [(op, fence, max(due, now)) for due, _, op, fence in self._held]
        self._held.clear()
        return held

    async def _hand_back(self, ops: list[tuple[Operation, Fence, datetime]]) -> None:
        """Release claimed (due now) or held (due at their time) operations not started."""
        if not ops:
            return
        with contextlib.suppress(Exception):  # they fall due anyway when the lease lapses
            async with self.ctx.db.transaction() as txn:
                for op, fence, due in ops:
                    await repo.release_unstarted(txn, op, fence=fence, due=due)

    async def _pause(self) -> float:
        """Seconds until the next operation nobody holds is due, at most one interval."""
        now = self.ctx.now()
        try:
            async with self.ctx.db.read() as txn:
                due = await repo.next_due_at(txn, now)
        except Exception:
            log.exception("could not read the next due time")
            return self.interval
        if due is None:
            return self.interval
        wait = (due - now).total_seconds()
        return min(self.interval, max(MIN_SLEEP_SECONDS, wait))

    async def _prune_if_due(self) -> None:
        """Continuous retention, beside the claims: one small batch per interval (again at
        the next pass while batches come back full), each its own short transaction
        (app/retention/prune.py). Off with JOBGATE_RETENTION_SECONDS=0."""
        settings = self.ctx.settings
        if not settings.retention_seconds or self._loop_time() < self._prune_at:
            return
        full = False
        try:
            plan = Plan(
                now=self.ctx.now(),
                retention_seconds=settings.retention_seconds,
                tombstone_seconds=settings.tombstone_retention_seconds,
                batch=settings.prune_batch,
                signing_key=settings.audit_signing_key,
                actor=f"observer:{self.ctx.worker_id}",
            )
            tally = await prune_step(self.ctx.db, self.ctx.results, plan)
            full = tally.operations >= plan.batch
            if tally.operations or tally.audit_entries or tally.tombstones_expired:
                log.info(
                    "pruned %d finished operations, %d audit entries, %d tombstones",
                    tally.operations, tally.audit_entries, tally.tombstones_expired,
                )  # fmt: skip
        except Exception:
            log.exception("prune step failed; trying again in an interval")
        self._prune_at = self._loop_time() + (0.0 if full else settings.prune_interval_seconds)

    def stop(self) -> None:
        self._stopping.set()
