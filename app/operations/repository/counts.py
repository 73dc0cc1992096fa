"""Counts over the state index, for the metrics scrape and tests; never the whole history.

Only states that are not terminal are counted by state (in flight and needing
attention): that set stays small however many operations have finished. Finished
totals are counters (`jobgate_transitions_total`), not gauges.
"""

from __future__ import annotations

from sqlalchemy import func, select

from app.core.db.txn import Txn
from app.operations.domain.states import TERMINAL, State
from app.operations.repository.reads import needs_human
from app.operations.repository.tables import OPS

OPEN_STATES = tuple(s.value for s in State if s not in TERMINAL)


async def count_by_state(txn: Txn) -> dict[str, int]:
    rows = await txn.execute(select(OPS.c.state, func.count()).group_by(OPS.c.state))
    return {state: n for state, n in rows.all()}


async def open_state_counts(txn: Txn) -> dict[str, int]:
    """Operations per state, for every state that is not terminal (0 included)."""
    stmt = (
        select(OPS.c.state, func.count()).where(OPS.c.state.in_(OPEN_STATES)).group_by(OPS.c.state)
    )
    found = {state: int(n) for state, n in (await txn.execute(stmt)).all()}
    return {state: found.get(state, 0) for state in OPEN_STATES}


async def attention_count(txn: Txn) -> int:
    """How many operations the attention inbox holds (the same condition, counted)."""
    stmt = select(func.count()).select_from(OPS).where(needs_human())
    return int((await txn.execute(stmt)).scalar_one())
