"""The figures of the dashboard (app/views/dashboard.py): how the work is going.

From the operations created in the last hours (bounded, app/operations/repository/
figures.py) and the oldest still in flight:

- per hour, how many were created, by the status an agent sees now;
- per provider and kind, the 50th, 90th and 99th percentile of the time from intent to
  end, over those that ended, and their failure and attention rates;
- the slowest in flight, with their age.

The same figures for Prometheus are `jobgate_operation_seconds` (per provider, kind and
end state), `jobgate_transitions_total` and `jobgate_operations` (deploy/grafana/).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.operations.context import AppContext
from app.operations.domain.states import (
    NEEDS_ATTENTION,
    STATUS_OF,
    TERMINAL,
    AgentStatus,
    State,
)
from app.operations.repository import figures as repo
from app.operations.repository.figures import Brief

HOURS = 12  # hours the dashboard looks back
SLOWEST = 10  # operations in flight shown, oldest first
QUANTILES = (0.5, 0.9, 0.99)
STATUSES: tuple[str, ...] = tuple(s.value for s in AgentStatus)


@dataclass(frozen=True)
class Lane:
    """One provider and kind over the window."""

    provider: str
    kind: str
    created: int
    ended: int
    failed: int
    attention: int
    quantiles: tuple[float, ...]  # seconds, one per QUANTILES; empty when none ended

    @property
    def failure_rate(self) -> float | None:
        return self.failed / self.ended if self.ended else None

    @property
    def attention_rate(self) -> float | None:
        return self.attention / self.ended if self.ended else None


@dataclass(frozen=True)
class Figures:
    now: datetime
    hours: list[datetime]  # the start of each hour, oldest first
    per_hour: list[Counter[str]]  # per hour: status -> operations created then
    lanes: list[Lane]
    slowest: list[tuple[Brief, float]]  # in flight, with age in seconds
    truncated: bool  # the window held more rows than one read takes


def status_of(b: Brief) -> str:
    if b.state == State.SUCCEEDED and b.outcome == AgentStatus.COMPLETED_WITH_ERRORS.value:
        return AgentStatus.COMPLETED_WITH_ERRORS.value
    return STATUS_OF[b.state].value


def quantile(sorted_values: list[float], q: float) -> float:
    """The nearest-rank quantile of a sorted list (the value at or above q of them)."""
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[rank - 1]


def summarize(
    recent: list[Brief], in_flight: list[Brief], now: datetime, *, hours: int = HOURS
) -> Figures:
    """The dashboard's figures from its rows (pure: tests feed it rows)."""
    top = now.replace(minute=0, second=0, microsecond=0)
    starts = [top - timedelta(hours=h) for h in range(hours - 1, -1, -1)]
    per_hour: list[Counter[str]] = [Counter() for _ in starts]
    by_lane: dict[tuple[str, str], list[Brief]] = defaultdict(list)
    for b in recent:
        slot = hours - 1 - int((top - b.created_at.replace(minute=0, second=0, microsecond=0))
                               .total_seconds() // 3600)  # fmt: skip
        if 0 <= slot < hours:
            per_hour[slot][status_of(b)] += 1
        by_lane[(b.provider, b.kind)].append(b)
    lanes = []
    for (provider, kind), rows in sorted(by_lane.items()):
        ended = [b for b in rows if b.state in TERMINAL or b.state in NEEDS_ATTENTION]
        took = sorted(max(0.0, (b.updated_at - b.created_at).total_seconds()) for b in ended)
        lanes.append(
            Lane(
                provider=provider,
                kind=kind,
                created=len(rows),
                ended=len(ended),
                failed=sum(1 for b in ended if b.state in (State.FAILED, State.ABANDONED)),
                attention=sum(1 for b in ended if b.state in NEEDS_ATTENTION),
                quantiles=tuple(quantile(took, q) for q in QUANTILES) if took else (),
            )
        )
    slowest = [(b, max(0.0, (now - b.created_at).total_seconds())) for b in in_flight]
    return Figures(now, starts, per_hour, lanes, slowest, len(recent) >= repo.MAX_RECENT)


async def figures(ctx: AppContext, *, hours: int = HOURS) -> Figures:
    """Read and summarize the last `hours` (every operation: the page is an operator's)."""
    now = ctx.now()
    since = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours - 1)
    async with ctx.db.read() as txn:
        recent = await repo.created_since(txn, since)
        in_flight = await repo.oldest_in_flight(txn, limit=SLOWEST)
    return summarize(recent, in_flight, now, hours=hours)
