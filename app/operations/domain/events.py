"""Events the ledger emits inside the transaction that caused them.

Higher layers subscribe (completion callbacks enqueue their outbox row on `done`)
so the ledger never imports them. A handler runs in the writer's transaction: what
it writes commits with the state change or not at all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from app.core.db.txn import Txn
from app.operations.domain.operation import Operation
from app.operations.domain.states import State

DoneHandler = Callable[[Txn, Operation, State, datetime], Awaitable[object]]

_done: list[DoneHandler] = []


def on_done(handler: DoneHandler) -> None:
    """Subscribe to 'an operation reached a done state'; subscribing twice is a no-op."""
    if handler not in _done:
        _done.append(handler)


async def emit_done(txn: Txn, op: Operation, state: State, now: datetime) -> None:
    """Run every `done` handler, in subscription order, in the caller's transaction."""
    for handler in _done:
        await handler(txn, op, state, now)
