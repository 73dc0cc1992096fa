"""In-process wake-ups: waiters on an operation, and the observer loop waiting for work.

Notifications are hints, never the source of truth: every waiter re-reads the
database, and also wakes on its own after a bounded interval so work done by
another process is seen too.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from datetime import datetime

RECENT_DONE = 1000  # done snapshots kept for waits that begin just after the end


class Notifier:
    """Per-operation events plus one 'there is new work' event for the observer."""

    def __init__(self) -> None:
        self._waiters: dict[str, set[_Waiter]] = defaultdict(set)
        self._done_waiters: dict[str, set[_Waiter]] = defaultdict(set)
        self.work = asyncio.Event()
        self._recent: OrderedDict[str, object] = OrderedDict()  # op id -> its done snapshot
        # The running observer's `released` (app/observer/worker.py), told when another
        # process handed an operation back to the queue due at a given time.
        self.on_due: Callable[[datetime], None] | None = None
        # The running observer's `changed`, told when another process wrote an operation
        # (with the version it wrote, for a transition), so one it holds is read afresh.
        self.on_change: Callable[[str, int | None], None] | None = None

    def due(self, at: datetime) -> None:
        """An operation nobody holds falls due at `at` (announced by another process)."""
        if self.on_due is not None:
            self.on_due(at)

    def changed(self, op_id: str, version: int | None) -> None:
        """Another process wrote `op_id` (`version`: the one a transition wrote)."""
        if self.on_change is not None:
            self.on_change(op_id, version)

    def publish(self, op_id: str, *, done: bool | None = None, snapshot: object = None) -> None:
        """`op_id` changed; `done=False` says it is certainly not done yet (a local
        observation), which wakes only those waiting for any change, not for the end.
        `snapshot`: the operation as this process just committed it (a copy), so a waiter
        in this process needs no read."""
        if done and snapshot is not None:
            self._recent[op_id] = snapshot
            if len(self._recent) > RECENT_DONE:
                self._recent.popitem(last=False)
        for w in self._waiters.get(op_id, ()):
            w.wake(snapshot)
        if done is not False:
            for w in self._done_waiters.get(op_id, ()):
                w.wake(snapshot)

    def recent_done(self, op_id: str) -> object:
        """The snapshot of `op_id` if this process saw it end lately (else None): a wait
        that began just after is answered with it, no read and no missed notification."""
        return self._recent.get(op_id)

    def kick(self) -> None:
        """Tell the observer loop there may be due work now."""
        self.work.set()

    async def wait(self, op_id: str, timeout: float, *, for_done: bool = False) -> bool:
        """Block until `op_id` changes (`for_done`: may have become done) or `timeout`
        passes; True if notified."""
        notified, _ = await self.wait_snapshot(op_id, timeout, for_done=for_done)
        return notified

    async def wait_snapshot(
        self, op_id: str, timeout: float, *, for_done: bool = False
    ) -> tuple[bool, object]:
        """`wait`, and the snapshot the notification carried (None: read it)."""
        waiters = self._done_waiters if for_done else self._waiters
        w = _Waiter()
        waiters[op_id].add(w)
        try:
            await asyncio.wait_for(w.event.wait(), timeout)
            return True, w.snapshot
        except TimeoutError:
            return False, None
        finally:
            waiters[op_id].discard(w)
            if not waiters[op_id]:
                del waiters[op_id]


class _Waiter:
    """One wait: its event and the snapshot the notification that set it carried."""

    __slots__ = ("event", "snapshot")

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.snapshot: object = None

    def wake(self, snapshot: object) -> None:
        if snapshot is not None:  # the commit's own copy wins over a bare notification
            self.snapshot = snapshot
        self.event.set()
