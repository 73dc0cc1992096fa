"""SQL of the policy and its approval gate: one key's recent and open operations, and
the creates held for approval (docs/policy.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select, text

from app.core.db.txn import Txn
from app.operations.domain.operation import Operation
from app.operations.domain.states import NEEDS_ATTENTION, TERMINAL, State
from app.operations.repository.tables import OPS, operations_of, select_operations

_DONE = [s.value for s in TERMINAL | NEEDS_ATTENTION]


@dataclass(frozen=True)
class KeyOperation:
    """What the policy reads of one operation of the key it checks."""

    provider: str
    kind: str
    labels: dict[str, Any]
    in_flight: bool
    created_at: datetime
    cost: float


async def lock_key(txn: Txn, principal: str) -> None:
    """PostgreSQL: one key's creates take their policy decision one at a time (a lock
    held until this transaction ends), so two concurrent creates cannot both take the
    last place. SQLite's writer lock already serializes them."""
    if txn.dialect.name == "postgresql":
        await txn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": principal})


async def key_operations(txn: Txn, principal: str, *, since: datetime) -> list[KeyOperation]:
    """The key's operations created since `since`, and every one not done whenever made."""
    stmt = select(
        OPS.c.provider, OPS.c.kind, OPS.c.labels, OPS.c.state, OPS.c.created_at, OPS.c.cost
    ).where(
        OPS.c.principal == principal,
        or_(OPS.c.created_at >= since, OPS.c.state.not_in(_DONE)),
    )
    return [
        KeyOperation(
            provider=r.provider,
            kind=r.kind,
            labels=r.labels if isinstance(r.labels, dict) else {},
            in_flight=str(r.state) not in _DONE,
            created_at=r.created_at,
            cost=float(r.cost or 0),
        )
        for r in (await txn.execute(stmt)).all()
    ]


def _awaiting(principal: str | None) -> Any:
    stmt = select_operations().where(OPS.c.state == State.AWAITING_APPROVAL.value)
    return stmt if principal is None else stmt.where(OPS.c.principal == principal)


async def awaiting_approval(txn: Txn, *, principal: str | None, limit: int) -> list[Operation]:
    """Creates held for approval, oldest first."""
    stmt = _awaiting(principal).order_by(OPS.c.updated_at, OPS.c.id).limit(limit)
    return operations_of(await txn.execute(stmt))


async def awaiting_count(txn: Txn) -> int:
    stmt = select(func.count()).select_from(OPS).where(OPS.c.state == State.AWAITING_APPROVAL.value)
    return int((await txn.execute(stmt)).scalar_one())
