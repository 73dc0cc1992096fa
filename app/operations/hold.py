"""Holding an operation between two close polls, under its lease, in this process.

An observer that is going to poll an operation again in a moment keeps its lease
(renewed) instead of handing it back and claiming it again: the claim, the release
and the next-due read of every short poll are saved (docs/performance.md). The row says when
the next poll is due (`next_poll_at`) and its lease says who holds it; if the holder
dies, the lease lapses and any observer takes the operation over, as after a crash
in the middle of a step. Only polls due within `observer_hold_seconds` are held, at
most a bounded number per process.

The protocol lives below the context so the context can carry the process's holder
(the in-process observer, when one runs) to the create request, which hands its new
operation straight to it. The lease's renewal itself is `app/operations/driver/lease.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from app.core.db.txn import Txn

if TYPE_CHECKING:
    from app.operations.domain.operation import Operation
    from app.operations.repository import Fence


class Holder(Protocol):
    def holds(self, op_id: str) -> bool:
        """True if `op_id` is held here, waiting for its next step."""
        ...

    def accepts(self, delay: float) -> bool:
        """True if a poll due in `delay` seconds may be held here (asked before writing)."""
        ...

    def take(self, op: Operation, fence: Fence, due: datetime) -> None:
        """Hold `op` (its lease renewed and its due time written) until `due`."""
        ...

    def released(self, due: datetime) -> None:
        """An operation was handed back to the queue, due at `due` (claim again by then)."""
        ...

    def wake(self, op_id: str) -> None:
        """If `op_id` is held here, make it due now (a cancel intent or a webhook was
        recorded that its next step should act on)."""
        ...


def wake_on_commit(txn: Txn, holder: Holder | None, op_id: str) -> bool:
    """Once this transaction commits, wake `op_id` if this process holds it (the step
    then reads what was written); True if it is held here now."""
    if holder is None:
        return False
    txn.on_commit(lambda: holder.wake(op_id))
    return holder.holds(op_id)
