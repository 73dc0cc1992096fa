"""Inserts and guarded updates: compare-and-set on state and version, fenced by a
lease, or checked against the version an operator read. Functions flush, never commit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TypedDict

from sqlalchemy import Update, bindparam, func, insert, or_, update

from app import audit
from app.core.db.txn import Txn
from app.operations.domain.operation import Operation
from app.operations.domain.states import State, is_done
from app.operations.repository.tables import HIST, ITEMS, OPS, Fence, operation_values

# The columns an UPDATE sets, by name (`_set` refuses a name that is no column).
Fields = Mapping[str, object]


class HistoryRow(TypedDict):
    """One history row, as `append_history_rows` writes it."""

    operation_id: str
    at: datetime
    kind: str
    actor: str
    cause: str
    from_state: str | None
    to_state: str | None
    data: object


_OP_INSERT = insert(OPS)  # built once: every column, values by column key


async def insert_operation(txn: Txn, op: Operation) -> None:
    await txn.execute(_OP_INSERT, operation_values(op))


async def _one_row(txn: Txn, stmt: Update, params: Fields | None = None) -> bool:
    """Run a guarded UPDATE of one row (a prebuilt one with its `params`); True only if
    its guard still held (one row hit)."""
    result = await txn.execute(stmt, params)
    return result.rowcount == 1


async def make_due_now(txn: Txn, op_id: str, *, now: datetime, reason: str) -> bool:
    """Make the operation due now, if automation still runs it and nobody holds it.

    A NULL `next_poll_at` means the gateway has nothing more to do (done): a late
    event must not revive it. A live lease means its holder steps soon anyway, and
    its own schedule write would overwrite ours. Already due: nothing to change.
    """
    stmt = (
        update(OPS)
        .where(
            OPS.c.id == op_id,
            OPS.c.next_poll_at.is_not(None),
            OPS.c.next_poll_at > now,
            or_(OPS.c.lease_expires_at.is_(None), OPS.c.lease_expires_at <= now),
        )
        .values(next_poll_at=now, next_poll_reason=reason[:200])
    )
    return await _one_row(txn, stmt)


def history_row(
    *,
    operation_id: str,
    at: datetime,
    kind: str,
    actor: str,
    cause: str,
    from_state: str | None = None,
    to_state: str | None = None,
    data: object = None,
) -> HistoryRow:
    """One history row, as `append_history_rows` writes it."""
    return {
        "operation_id": operation_id,
        "at": at,
        "kind": kind,
        "actor": actor,
        "cause": cause,
        "from_state": from_state,
        "to_state": to_state,
        "data": data,
    }


async def append_history(
    txn: Txn,
    *,
    operation_id: str,
    at: datetime,
    kind: str,
    actor: str,
    cause: str,
    from_state: str | None = None,
    to_state: str | None = None,
    data: object = None,
) -> None:
    row = history_row(
        operation_id=operation_id,
        at=at,
        kind=kind,
        actor=actor,
        cause=cause,
        from_state=from_state,
        to_state=to_state,
        data=data,
    )
    await append_history_rows(txn, [row])


async def append_history_rows(txn: Txn, rows: Sequence[HistoryRow]) -> None:
    """Rows of one transaction in one statement, in order (their ids follow it)."""
    if not rows:
        return
    await txn.execute(_HIST_INSERT, rows)
    for row in rows:  # each audit entry commits with its row (and only with it)
        audit.record_history(txn, **row)


_HIST_INSERT = HIST.insert()
_ITEMS_INSERT = ITEMS.insert()

# Prebuilt guarded UPDATEs (docs/performance.md): built once, their WHERE values bound by name
# (`k_*`, no column's name) and their SET columns taken from the parameters, so a
# step pays neither building the statement nor its cache key; SQLAlchemy compiles
# each distinct set of columns once. Measured by bench/transaction_cost.py.
_ID = OPS.c.id == bindparam("k_id")
_LEASE = (OPS.c.lease_owner == bindparam("k_owner"), OPS.c.lease_token == bindparam("k_token"))
_IN_STATE = OPS.c.state == bindparam("k_state")
_FENCED = update(OPS).where(_ID, *_LEASE)
_FENCED_IN_STATE = _FENCED.where(_IN_STATE)
_CAS = (_IN_STATE, OPS.c.version == bindparam("k_version"))
_BUMP = {"version": OPS.c.version + 1}
_TRANSITION = update(OPS).where(_ID, *_CAS).values(_BUMP)
_TRANSITION_FENCED = update(OPS).where(_ID, *_LEASE, *_CAS).values(_BUMP)
# PostgreSQL: the notification rides on the UPDATE (evaluated only for the row it
# changed, delivered on commit), not a statement of its own: one round trip less.
_NOTIFY = func.pg_notify("jobgate_ops", bindparam("k_note"))
_NOTIFYING = {_TRANSITION: _TRANSITION.returning(_NOTIFY)}
_NOTIFYING[_TRANSITION_FENCED] = _TRANSITION_FENCED.returning(_NOTIFY)


_COLUMNS = frozenset(OPS.c.keys())


def _set(fields: Fields, **more: object) -> dict[str, object]:
    """The SET values of a prebuilt UPDATE; a name that is no column is refused (the
    statement would silently leave it out)."""
    if unknown := fields.keys() - _COLUMNS:
        raise ValueError(f"not columns of operations: {sorted(unknown)}")
    return {**fields, **more}


def _guard(op_id: str, fence: Fence | None) -> dict[str, object]:
    """The WHERE values of a prebuilt statement: the row, and (given a fence) its lease."""
    if fence is None:
        return {"k_id": op_id}
    return {"k_id": op_id, "k_owner": fence.owner, "k_token": fence.token}


async def transition(
    txn: Txn,
    op_id: str,
    *,
    expect_state: State,
    expect_version: int,
    to: State,
    fence: Fence | None,
    at: datetime,
    fields: Fields,
) -> bool:
    """Compare-and-set the state; True only if the row still had the expected state,
    version and (when fenced) lease. The caller writes the history row when applied."""
    stmt = _TRANSITION if fence is None else _TRANSITION_FENCED
    params = _set(fields, state=to.value, updated_at=at)
    params.update(_guard(op_id, fence), k_state=expect_state.value, k_version=expect_version)
    if txn.dialect.name != "postgresql":
        return await _one_row(txn, stmt, params)
    # Delivered on commit, so listeners never see a change that rolled back. "open"
    # says the operation is certainly not done (app/core/db/drivers/pg_listen.py).
    params["k_note"] = note(op_id, to, fields, expect_version + 1)
    return len((await txn.execute(_NOTIFYING[stmt], params)).all()) == 1


def note(op_id: str, to: State, fields: Fields, version: int | None = None) -> str:
    """The NOTIFY payload of a change (app/core/db/drivers/pg_listen.py): "open" if it left
    the operation certainly not done, the Unix time it falls due if it went back to the
    queue (no lease, a next poll), and `v<N>` the version it wrote (a holder's own
    write comes back to it too, and is known by it)."""
    parts = [op_id]
    if not is_done(to):
        parts.append("open")
        due = fields.get("next_poll_at")
        if isinstance(due, datetime) and "lease_owner" in fields and fields["lease_owner"] is None:
            parts.append(f"{due.timestamp():.6f}")
    if version is not None:
        parts.append(f"v{version}")
    return " ".join(parts)


async def fenced_update(
    txn: Txn,
    op_id: str,
    *,
    fence: Fence,
    at: datetime,
    fields: Fields,
    expect_state: State | None = None,
) -> bool:
    """Write fields without a state change (observations, schedule), fenced by the lease."""
    params = {**_set(fields, updated_at=at), **_guard(op_id, fence)}
    if expect_state is None:
        return await _one_row(txn, _FENCED, params)
    params["k_state"] = expect_state.value
    return await _one_row(txn, _FENCED_IN_STATE, params)


async def operator_update(
    txn: Txn,
    op_id: str,
    *,
    expected_version: int,
    at: datetime,
    fields: Fields,
) -> bool:
    """An operator's write without a state change; refused (False) if the row moved on.

    Compare-and-set on the version the operator's request read, so a second,
    concurrent decision can never overwrite the first.
    """
    stmt = (
        update(OPS)
        .where(OPS.c.id == op_id, OPS.c.version == expected_version)
        .values(version=OPS.c.version + 1, updated_at=at, **fields)
    )
    return await _one_row(txn, stmt)


async def record_cancel_intent(
    txn: Txn,
    op_id: str,
    *,
    now: datetime,
    by: str,
    reason: str,
    deadline: datetime,
    done_states: list[str],
) -> bool:
    """Record who asked to cancel, why and by when (once; never on a done operation).

    On PostgreSQL the change is announced (it rides on the UPDATE): an observer in another
    process that holds the operation between two polls reads it afresh and cancels."""
    stmt = (
        update(OPS)
        .where(
            OPS.c.id == op_id, OPS.c.cancel_requested_at.is_(None), OPS.c.state.not_in(done_states)
        )
        .values(
            cancel_requested_at=now,
            cancel_requested_by=by,
            cancel_reason=reason,
            cancel_deadline_at=deadline,
            updated_at=now,
        )
    )
    if txn.dialect.name != "postgresql":
        return await _one_row(txn, stmt)
    announced = stmt.returning(func.pg_notify("jobgate_ops", f"{op_id} open"))
    return len((await txn.execute(announced)).all()) == 1


async def insert_result_items(txn: Txn, op_id: str, items: Sequence[object]) -> None:
    if not items:
        return
    await txn.execute(
        _ITEMS_INSERT,
        [{"operation_id": op_id, "position": i, "item": item} for i, item in enumerate(items)],
    )
