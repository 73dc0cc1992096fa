"""The one write path for state: check the table, compare-and-set, append history.

A transition is applied only if the state machine allows it with its evidence AND
the row still has the state, version and lease the writer read. Refusals are
recorded in history (in their own transaction) and never change the row. The first
state of an operation (its intent) is written here too (`record_intent`), so every
transition row in history comes from this module. When an operation reaches a done
state, the context's `on_done` handlers (wired where the app is built: the callback
outbox) write in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from app.core.db.txn import Txn
from app.core.obs import telemetry
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import (
    Evidence,
    State,
    TransitionRefused,
    check_transition,
    is_done,
)
from app.operations.repository import Fence, HistoryRow


async def record_intent(txn: Txn, op: Operation, *, actor: str, cause: str, data: Any) -> None:
    """Insert the new operation in its first state with that transition's history row
    (from no state): the intent, committed before any provider call."""
    await repo.insert_operation(txn, op)
    entry = repo.history_row(
        operation_id=op.id,
        at=op.created_at,
        kind="transition",
        actor=actor,
        cause=cause,
        from_state=None,
        to_state=op.state.value,
        data=data,
    )
    await repo.append_history_rows(txn, [entry])


async def transition(
    ctx: AppContext,
    txn: Txn,
    op: Operation,
    to: State,
    *,
    evidence: Evidence,
    actor: str,
    cause: str,
    now: datetime,
    fence: Fence | None,
    fields: dict[str, Any] | None = None,
    data: Any = None,
    before: Sequence[HistoryRow] = (),
    into: list[HistoryRow] | None = None,
) -> bool:
    """Apply `op.state -> to`; raises TransitionRefused; False if someone else moved it.

    On success the in-memory `op` is updated to match the row, and the transition's
    history row is written after `before` (rows from `row()`) in one statement, or
    appended to `into` for the caller to write with the rest of its transaction's rows.
    When refused or moved on, `before` is left to the caller, who writes why with it.
    """
    from_state = op.state
    check_transition(from_state, to, evidence)
    fields = dict(fields or {})
    applied = await repo.transition(
        txn,
        op.id,
        expect_state=from_state,
        expect_version=op.version,
        to=to,
        fence=fence,
        at=now,
        fields=fields,
    )
    if not applied:
        return False
    payload: dict[str, Any] = {"evidence": evidence.kind}
    if evidence.data:
        payload["evidence_data"] = evidence.data
    if data is not None:
        payload["data"] = data
    entry = repo.history_row(
        operation_id=op.id,
        at=now,
        kind="transition",
        actor=actor,
        cause=cause,
        from_state=from_state.value,
        to_state=to.value,
        data=payload,
    )
    if into is None:
        await repo.append_history_rows(txn, [*before, entry])
    else:
        into.extend([*before, entry])
    for key, value in fields.items():
        setattr(op, key, value)
    op.state = to
    op.version += 1
    op.updated_at = now
    txn.on_commit(_announce(op, from_state, to, actor, cause))
    if is_done(to):
        # The handlers (the callbacks outbox) write in this transaction: no lost or phantom event.
        for handler in ctx.on_done:
            await handler(txn, op, to, now)
    return True


async def record_refusal(
    txn: Txn,
    op: Operation,
    err: TransitionRefused,
    *,
    actor: str,
    now: datetime,
    before: Sequence[HistoryRow] = (),
) -> None:
    """A refused transition is evidence too: keep it (after `before`), change nothing else."""
    telemetry.refused(op.id, op.trace_id, err.from_state.value, err.to_state.value, err.reason)
    entry = repo.history_row(
        operation_id=op.id,
        at=now,
        kind="refused",
        actor=actor,
        cause=err.reason,
        from_state=err.from_state.value,
        to_state=err.to_state.value,
    )
    await repo.append_history_rows(txn, [*before, entry])


def _announce(
    op: Operation, from_state: State, to: State, actor: str, cause: str
) -> Callable[[], None]:
    """The log line and counter of a transition, for once it has committed; the end of
    an operation (done, or waiting for a person) also counts its time since the intent."""
    op_id, trace_id, version = op.id, op.trace_id, op.version
    took = (op.updated_at - op.created_at).total_seconds() if is_done(to) else None
    provider, kind = op.provider, op.kind

    def announce() -> None:
        telemetry.transition(
            op_id, trace_id, from_state.value, to.value, actor=actor, cause=cause, version=version
        )
        if took is not None:
            telemetry.operation_ended(provider, kind, to.value, took)

    return announce


def row(
    op: Operation, *, kind: str, actor: str, cause: str, now: datetime, data: object = None
) -> HistoryRow:
    """A history row that is not a transition (an exchange, observation or note), for
    `write` or a transition's `before`: rows of one transaction go in one statement."""
    return repo.history_row(
        operation_id=op.id,
        at=now,
        kind=kind,
        actor=actor,
        cause=cause,
        from_state=op.state,
        to_state=op.state,
        data=data,
    )


async def write(txn: Txn, rows: Sequence[HistoryRow]) -> None:
    await repo.append_history_rows(txn, list(rows))


async def record(
    txn: Txn,
    op: Operation,
    *,
    kind: str,
    actor: str,
    cause: str,
    now: datetime,
    data: Any = None,
) -> None:
    """One history row that is not a transition: an exchange, observation or note."""
    await write(txn, [row(op, kind=kind, actor=actor, cause=cause, now=now, data=data)])
