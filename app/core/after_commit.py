"""Run a callback once the transaction has committed (and never if it rolls back).

Log lines and counters about a write must not claim a transition that a later
rollback undid; hooks register here from inside the transaction instead.
"""

from __future__ import annotations

from collections.abc import Callable

from app.core.txn import Txn


def on_commit(txn: Txn, fn: Callable[[], None]) -> None:
    """Call `fn` after this transaction commits."""
    txn.on_commit(fn)
