"""Counts for the metrics scrape: cheap reads over the state index, never the whole history.

Only states that are not terminal are counted (in flight and needing attention): that
set stays small however many operations have finished, and `state` is indexed.
Finished totals are counters (`jobgate_transitions_total`), not gauges.
"""

from __future__ import annotations

from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.operations.repository import OPS
from app.operations.states import NEEDS_ATTENTION, TERMINAL, State

OPEN_STATES = tuple(s.value for s in State if s not in TERMINAL)


async def open_state_counts(session: AsyncSession) -> dict[str, int]:
    """Operations per state, for every state that is not terminal (0 included)."""
    stmt = (
        select(OPS.c.state, func.count()).where(OPS.c.state.in_(OPEN_STATES)).group_by(OPS.c.state)
    )
    found = {state: int(n) for state, n in (await session.execute(stmt)).all()}
    return {state: found.get(state, 0) for state in OPEN_STATES}


async def attention_count(session: AsyncSession) -> int:
    """What the attention inbox lists (app/operations/attention.py `inbox`): needs-attention
    states plus partial results nobody has acknowledged yet."""
    partial = and_(
        OPS.c.state == State.SUCCEEDED.value,
        OPS.c.acknowledged_at.is_(None),
        OPS.c.result_summary.is_not(None),
    )
    attention = OPS.c.state.in_([s.value for s in NEEDS_ATTENTION])
    stmt = select(func.count()).select_from(OPS).where(or_(attention, partial))
    return int((await session.execute(stmt)).scalar_one())
