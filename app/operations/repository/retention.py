"""The SQL of retention on the tables this package owns: which finished operations may
be pruned, their tombstones, and the delete of an operation with its history and
result items (docs/operations.md, "Retention").

What is never pruned: an operation that is not done, one that needs a person (a
needs-attention state, or a partial result nobody acknowledged), one held for approval,
and one whose completion callback is still to be delivered.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, column, delete, exists, func, not_, select, table

from app.core.db.row_table import table_of
from app.core.db.txn import Txn
from app.operations.domain.models import Tombstone
from app.operations.domain.states import TERMINAL
from app.operations.repository.reads import needs_human
from app.operations.repository.tables import HIST, ITEMS, OPS

TOMBS = table_of(Tombstone)
FINISHED_STATES = tuple(sorted(s.value for s in TERMINAL))
# A completion callback still to be delivered keeps its operation (the outbox belongs to
# app/callbacks, a room above this one: named here, not imported).
_OUTBOX = table("callback_outbox", column("operation_id"), column("status"))
_CALLBACK_PENDING = exists().where(
    _OUTBOX.c.operation_id == OPS.c.id, _OUTBOX.c.status == "pending"
)


@dataclass(frozen=True)
class Prunable:
    """One finished operation the prune may remove, and what its tombstone keeps."""

    id: str
    principal: str
    idempotency_key: str
    fingerprint: str
    provider: str
    kind: str
    state: str
    outcome: str | None
    finished_at: datetime
    result_ref: str | None


@dataclass(frozen=True)
class Removed:
    """Rows one batch removed, by table."""

    operations: int = 0
    history: int = 0
    result_items: int = 0


def _prunable(cutoff: datetime) -> Any:
    return and_(
        OPS.c.state.in_(FINISHED_STATES),
        OPS.c.updated_at < cutoff,
        not_(needs_human()),
        not_(_CALLBACK_PENDING),
    )


async def prunable(
    txn: Txn, cutoff: datetime, limit: int, *, skip_locked: bool = False
) -> list[Prunable]:
    """Up to `limit` finished operations last changed before `cutoff`, in no particular
    order (an order by time would sort every finished row in each batch: the index on
    (state, updated_at) answers several states unordered), locked for the delete
    (PostgreSQL: rows another transaction holds are skipped)."""
    cols = (OPS.c.id, OPS.c.principal, OPS.c.idempotency_key, OPS.c.fingerprint,
            OPS.c.provider, OPS.c.kind, OPS.c.state, OPS.c.outcome, OPS.c.updated_at,
            OPS.c.result_ref)  # fmt: skip
    stmt = select(*cols).where(_prunable(cutoff)).limit(limit)
    if txn.dialect.name != "sqlite" and txn.write:
        stmt = stmt.with_for_update(skip_locked=skip_locked)
    rows = (await txn.execute(stmt)).all()
    return [Prunable(*r) for r in rows]


async def count_prunable(txn: Txn, cutoff: datetime) -> int:
    stmt = select(func.count()).select_from(OPS).where(_prunable(cutoff))
    return int((await txn.execute(stmt)).scalar_one())


async def remove(txn: Txn, ops: list[Prunable], now: datetime) -> Removed:
    """Tombstone and delete `ops`, with their history and result items, in this
    transaction. History may be deleted only once its operation is gone and has a
    tombstone (migration 0020 holds the database to it), hence the order."""
    if not ops:
        return Removed()
    await txn.execute(
        TOMBS.insert(),
        [
            {
                "operation_id": o.id, "principal": o.principal,
                "idempotency_key": o.idempotency_key, "fingerprint": o.fingerprint,
                "provider": o.provider, "kind": o.kind, "state": o.state,
                "outcome": o.outcome, "finished_at": o.finished_at, "pruned_at": now,
            }
            for o in ops
        ],
    )  # fmt: skip
    ids = [o.id for o in ops]
    gone = await txn.execute(delete(OPS).where(OPS.c.id.in_(ids)))
    hist = await txn.execute(delete(HIST).where(HIST.c.operation_id.in_(ids)))
    items = await txn.execute(delete(ITEMS).where(ITEMS.c.operation_id.in_(ids)))
    return Removed(gone.rowcount, hist.rowcount, items.rowcount)


async def still_named(txn: Txn, result_ref: str) -> bool:
    """An operation still names this stored result (content-addressed: two may share)."""
    stmt = select(exists().where(OPS.c.result_ref == result_ref))
    return bool((await txn.execute(stmt)).scalar_one())


# Every create without a live operation under its key asks this: built once, so it is
# compiled once (app/core/db/sqlexec.py), not at each create.
_TOMB_BY_KEY = select(*TOMBS.columns).where(
    TOMBS.c.principal == bindparam("t_principal"),
    TOMBS.c.idempotency_key == bindparam("t_key"),
)


async def tombstone(txn: Txn, principal: str, key: str) -> Tombstone | None:
    """The tombstone of this principal's pruned operation under `key`, if any."""
    params = {"t_principal": principal, "t_key": key}
    row = (await txn.execute(_TOMB_BY_KEY, params)).first()
    return None if row is None else Tombstone(**dict(zip(TOMBS.columns.keys(), row, strict=True)))


async def tombstone_of(txn: Txn, principal: str | None, op_id: str) -> Tombstone | None:
    """The tombstone of a pruned operation by id (`principal` None: any caller's)."""
    stmt = select(*TOMBS.columns).where(TOMBS.c.operation_id == op_id)
    if principal is not None:
        stmt = stmt.where(TOMBS.c.principal == principal)
    row = (await txn.execute(stmt)).first()
    return None if row is None else Tombstone(**dict(zip(TOMBS.columns.keys(), row, strict=True)))


async def expire_tombstones(txn: Txn, cutoff: datetime, limit: int) -> int:
    """Delete up to `limit` tombstones of operations finished before `cutoff`."""
    oldest = (
        select(TOMBS.c.operation_id)
        .where(TOMBS.c.finished_at < cutoff)
        .order_by(TOMBS.c.finished_at)
        .limit(limit)
    )
    ids = [r[0] for r in (await txn.execute(oldest)).all()]
    if not ids:
        return 0
    result = await txn.execute(delete(TOMBS).where(TOMBS.c.operation_id.in_(ids)))
    return int(result.rowcount)
