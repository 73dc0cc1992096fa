"""In-process wake-ups: waiters on an operation, and the observer loop waiting for work.

Notifications are hints, never the source of truth: every waiter re-reads the
database, and also wakes on its own after a bounded interval so work done by
another process is seen too.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict


class Notifier:
    """Per-operation events plus one 'there is new work' event for the observer."""

    def __init__(self) -> None:
        self._waiters: dict[str, set[asyncio.Event]] = defaultdict(set)
        self.work = asyncio.Event()

    def publish(self, op_id: str) -> None:
        for ev in self._waiters.get(op_id, ()):
            ev.set()

    def kick(self) -> None:
        """Tell the observer loop there may be due work now."""
        self.work.set()

    async def wait(self, op_id: str, timeout: float) -> bool:
        """Block until `op_id` changes or `timeout` passes; True if notified."""
        ev = asyncio.Event()
        self._waiters[op_id].add(ev)
        try:
            await asyncio.wait_for(ev.wait(), timeout)
            return True
        except TimeoutError:
            return False
        finally:
            self._waiters[op_id].discard(ev)
            if not self._waiters[op_id]:
                del self._waiters[op_id]
