"""The durations estimates are learned from, and the in-flight jobs they are held against.

A duration is `updated_at - created_at` of a `succeeded` operation whose result was a
full success (`outcome` `succeeded`, or none recorded): the create to the success
written. Only the most recent `limit` are read, through the state index; the caller
caches the answer (app/operations/services/estimates.py), so this runs once per provider
and kind per cache period, not once per body.
"""

from __future__ import annotations

from sqlalchemy import or_, select

from app.core.db.txn import Txn
from app.operations.domain.operation import Operation
from app.operations.domain.states import State, is_done
from app.operations.repository.tables import OPS, operations_of, select_operations


async def recent_durations(txn: Txn, provider: str, kind: str, *, limit: int) -> list[float]:
    """Seconds from create to success of the latest `limit` such operations."""
    stmt = (
        select(OPS.c.created_at, OPS.c.updated_at)
        .where(
            OPS.c.state == State.SUCCEEDED,
            OPS.c.provider == provider,
            OPS.c.kind == kind,
            or_(OPS.c.outcome.is_(None), OPS.c.outcome == "succeeded"),
        )
        .order_by(OPS.c.updated_at.desc())
        .limit(limit)
    )
    rows = (await txn.execute(stmt)).all()
    return [(done - created).total_seconds() for created, done in rows]


async def in_flight(txn: Txn, *, principal: str | None, limit: int) -> list[Operation]:
    """Operations not done yet, oldest first (the slow ones among them are listed)."""
    open_states = [s for s in State if not is_done(s)]
    stmt = select_operations().where(OPS.c.state.in_(open_states))
    if principal is not None:
        stmt = stmt.where(OPS.c.principal == principal)
    stmt = stmt.order_by(OPS.c.created_at, OPS.c.id).limit(limit)
    return operations_of(await txn.execute(stmt))
