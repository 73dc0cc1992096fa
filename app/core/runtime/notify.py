"""In-process wake-ups: waiters on an operation, and the observer loop waiting for work.

Notifications are hints, never the source of truth: every waiter re-reads the
database, and also wakes on its own after a bounded interval so work done by
another process is seen too.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime


class Notifier:
    """Per-operation events plus one 'there is new work' event for the observer."""

    def __init__(self) -> None:
        self._waiters: dict[str, set[asyncio.Event]] = defaultdict(set)
        self._done_waiters: dict[str, set[asyncio.Event]] = defaultdict(set)
        self.work = asyncio.Event()
        # The running observer's `released` (app/observer/worker.py), told when another
        # process handed an operation back to the queue due at a given time.
        self.on_due: Callable[[datetime], None] | None = None

    def due(self, at: datetime) -> None:
        """An operation nobody holds falls due at `at` (announced by another process)."""
        if self.on_due is not None:
            self.on_due(at)

    def publish(self, op_id: str, *, done: bool | None = None) -> None:
        """`op_id` changed; `done=False` says it is certainly not done yet (a local
        observation), which wakes only those waiting for any change, not for the end."""
        for ev in self._waiters.get(op_id, ()):
            ev.set()
        if done is not False:
            for ev in self._done_waiters.get(op_id, ()):
                ev.set()

    def kick(self) -> None:
        """Tell the observer loop there may be due work now."""
        self.work.set()

    async def wait(self, op_id: str, timeout: float, *, for_done: bool = False) -> bool:
        """Block until `op_id` changes (`for_done`: may have become done) or `timeout`
        passes; True if notified."""
        waiters = self._done_waiters if for_done else self._waiters
        ev = asyncio.Event()
        waiters[op_id].add(ev)
        try:
            await asyncio.wait_for(ev.wait(), timeout)
            return True
        except TimeoutError:
            return False
        finally:
            waiters[op_id].discard(ev)
            if not waiters[op_id]:
                del waiters[op_id]
