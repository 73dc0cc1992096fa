"""Reads for the dashboard (app/views/dashboard.py): recent operations and the oldest
in flight, as small rows; bounded, on the `created_at` and `state` indexes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from app.core.db.txn import Txn
from app.operations.domain.states import NEEDS_ATTENTION, TERMINAL, State
from app.operations.repository.tables import OPS

MAX_RECENT = 20_000  # rows one dashboard reads at most; past it the window is the newest


@dataclass(frozen=True, slots=True)
class Brief:
    """What the dashboard needs of one operation."""

    id: str
    provider: str
    kind: str
    state: State
    outcome: str | None
    created_at: datetime
    updated_at: datetime


_COLUMNS = (
    OPS.c.id,
    OPS.c.provider,
    OPS.c.kind,
    OPS.c.state,
    OPS.c.outcome,
    OPS.c.created_at,
    OPS.c.updated_at,
)


def _brief(row: Sequence[Any]) -> Brief:
    id_, provider, kind, state, outcome, created, updated = row
    return Brief(str(id_), str(provider), str(kind), State(state), outcome, created, updated)


async def created_since(txn: Txn, since: datetime, *, limit: int = MAX_RECENT) -> list[Brief]:
    """Operations created at or after `since`, newest first, at most `limit`."""
    stmt = (
        select(*_COLUMNS)
        .where(OPS.c.created_at >= since)
        .order_by(OPS.c.created_at.desc(), OPS.c.id.desc())
        .limit(limit)
    )
    return [_brief(r) for r in (await txn.execute(stmt)).all()]


async def oldest_in_flight(txn: Txn, *, limit: int) -> list[Brief]:
    """The operations the gateway is still moving, oldest first."""
    done = [s.value for s in (*TERMINAL, *NEEDS_ATTENTION)]
    stmt = (
        select(*_COLUMNS)
        .where(OPS.c.state.not_in(done))
        .order_by(OPS.c.created_at, OPS.c.id)
        .limit(limit)
    )
    return [_brief(r) for r in (await txn.execute(stmt)).all()]
