"""Shared waiting: however many clients wait on one operation, one reader watches it.

Each watched operation gets one task that re-reads the row when notified (a local
commit, or PostgreSQL NOTIFY from another process) and at least every
`REREAD_SECONDS`; waiters only look at its latest snapshot. A thousand waiters on
one operation cost the database what one does.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from app.core.db.database import Database
from app.core.obs import telemetry
from app.core.runtime.notify import Notifier
from app.operations import repository as repo
from app.operations.domain.operation import Operation
from app.operations.domain.states import is_done

REREAD_SECONDS = 1.0  # a watched operation is re-read at least this often


@dataclass
class _Watch:
    snapshot: Operation | None = None
    waiters: int = 0
    cond: asyncio.Condition = field(default_factory=asyncio.Condition)
    task: asyncio.Task[None] | None = None


def _finished(op: Operation | None) -> bool:
    return op is None or is_done(op.state)


class WaitHub:
    """One watcher task per operation that has waiters."""

    def __init__(self, db: Database, notifier: Notifier) -> None:
        self.db = db
        self.notifier = notifier
        self._watches: dict[str, _Watch] = {}
        self.total_reads = 0  # database reads made by all watchers (tests, metrics)

    async def wait(
        self, op_id: str, timeout: float, *, read: Operation | None = None
    ) -> Operation | None:
        """The operation once done, or its latest snapshot when `timeout` passes. `read`:
        the operation as the caller just read it, the first snapshot of a new watch."""
        watch = self._watches.get(op_id)
        if watch is None:
            ended = self.notifier.recent_done(op_id)  # between the caller's read and now
            if isinstance(ended, Operation):
                return ended
            watch = self._watches[op_id] = _Watch(snapshot=read)
            watch.task = asyncio.create_task(self._watch(op_id, watch, fresh=read is not None))
        watch.waiters += 1
        ends = time.monotonic() + timeout
        telemetry.WAITS_IN_FLIGHT.inc()
        try:
            async with watch.cond:
                while watch.snapshot is None or not _finished(watch.snapshot):
                    left = ends - time.monotonic()
                    if left <= 0:
                        break
                    try:
                        await asyncio.wait_for(watch.cond.wait(), left)
                    except TimeoutError:
                        break
                return watch.snapshot
        finally:
            watch.waiters -= 1
            telemetry.WAITS_IN_FLIGHT.dec()

    async def _watch(self, op_id: str, watch: _Watch, *, fresh: bool) -> None:
        known: object = None  # a snapshot a local commit handed over: no read needed
        try:
            while True:
                if not fresh:
                    if isinstance(known, Operation):
                        op: Operation | None = known
                    else:
                        async with self.db.read() as txn:
                            op = await repo.get(txn, op_id)
                        self.total_reads += 1
                    async with watch.cond:
                        watch.snapshot = op
                        watch.cond.notify_all()
                    if _finished(op) or watch.waiters <= 0:
                        return
                fresh = False
                # It may have ended since the last look (in this process: its copy is kept);
                # checked and then waited on with no await between, so nothing slips past.
                known = self.notifier.recent_done(op_id)
                if known is not None:
                    continue
                # Woken only by what may be the end (a local observation says "not done"):
                # the snapshot may lag such changes by REREAD_SECONDS, so a waiter that
                # times out reads the operation afresh (`wait_routes`).
                _, known = await self.notifier.wait_snapshot(op_id, REREAD_SECONDS, for_done=True)
                if watch.waiters <= 0:
                    return
        finally:
            if self._watches.get(op_id) is watch:
                del self._watches[op_id]
