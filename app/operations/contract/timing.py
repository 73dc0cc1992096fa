"""How long an operation has run, how long it will likely take, and how far it is.

`elapsed_seconds` is on every body: from the create to now, or to the last write once
done. While not done, `estimate` (the median and 90th percentile of the durations of
recent succeeded jobs of the same provider and kind, with how many) and from it
`estimated_seconds_left` and `expected_done_at`; all three null until
`JOBGATE_ESTIMATE_MIN_JOBS` such jobs exist, and the two derived ones null once the job
runs past the p90, when nothing learned says how much longer (docs/agent-api.md, "How
long"). The message says it in in-progress words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.operations.contract.schemas import EstimateOut
from app.operations.domain.estimate import Estimate
from app.operations.domain.operation import Operation
from app.operations.domain.states import State, is_done


@dataclass(frozen=True, slots=True)
class Timing:
    """The timing fields of one body."""

    elapsed_seconds: float
    estimate: EstimateOut | None
    estimated_seconds_left: float | None
    expected_done_at: datetime | None
    progress_percent: float | None
    slow: bool


def elapsed(op: Operation, now: datetime) -> float:
    """Seconds since the create: to now, or to the last write once done."""
    end = op.updated_at if is_done(op.state) else now
    return max(0.0, round((end - op.created_at).total_seconds(), 1))


def progress_percent(op: Operation) -> float | None:
    """Completed of total, in percent, when the provider reports a total."""
    done, total = op.progress_completed, op.progress_total
    if done is None or not total or total <= 0:
        return None
    return round(min(100.0, max(0.0, 100.0 * done / total)), 1)


def timing(op: Operation, now: datetime, estimate: Estimate | None) -> Timing:
    """The timing of `op` at `now`, with the learned `estimate` of its kind (if any)."""
    spent = elapsed(op, now)
    pct = progress_percent(op)
    # No estimate for a done job, nor for one a person holds before it started.
    if estimate is None or is_done(op.state) or op.state == State.AWAITING_APPROVAL:
        return Timing(spent, None, None, None, pct, False)
    out = EstimateOut(
        p50_seconds=round(estimate.p50, 1),
        p90_seconds=round(estimate.p90, 1),
        based_on=estimate.based_on,
    )
    left = estimate.left(spent)
    if left is None:
        return Timing(spent, out, None, None, pct, estimate.slow(spent))
    left = float(math.ceil(left))
    return Timing(spent, out, left, now + timedelta(seconds=left), pct, False)


def sentence(t: Timing) -> str:
    """What the timing tells an agent, in in-progress words ('' without an estimate)."""
    est = t.estimate
    if est is None:
        return ""
    if t.slow:
        return (
            f" It has been running for {t.elapsed_seconds:g} seconds, longer than 90% of "
            f"similar jobs ({est.p90_seconds:g} seconds, from {est.based_on} earlier jobs "
            "of this kind); no estimate of the time left."
        )
    return (
        f" Similar jobs took about {est.p50_seconds:g} seconds (median of {est.based_on}); "
        f"about {t.estimated_seconds_left:g} more seconds is likely."
    )
