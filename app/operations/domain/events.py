"""What the ledger tells higher layers inside the transaction that caused it.

A `DoneHandler` runs when an operation reaches a done state, in the writer's
transaction: what it writes commits with the state change or not at all (the
completion callbacks enqueue their outbox row this way). Handlers are given to the
`AppContext` where the app is built (`app/main.py`), so the ledger never imports them
and no process-wide list holds them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from app.core.db.txn import Txn
from app.operations.domain.operation import Operation
from app.operations.domain.states import State

DoneHandler = Callable[[Txn, Operation, State, datetime], Awaitable[object]]
