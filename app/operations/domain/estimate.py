"""How long a job of one provider and kind usually takes, learned from finished ones.

Pure: the durations come from `repository/durations.py` (created to the success written,
of the most recent succeeded operations of the same provider and kind), the cache from
`services/estimates.py`. Nothing here is invented: with fewer durations than the minimum
(`JOBGATE_ESTIMATE_MIN_JOBS`) there is no estimate at all, and every number it gives lies
within the range of durations it was learned from (docs/agent-api.md, "How long").
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass


def quantile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, interpolated between the two nearest (never
    outside the smallest and largest value)."""
    if not ordered:
        raise ValueError("no values")
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass(frozen=True, slots=True)
class Estimate:
    """The median and 90th percentile of `based_on` finished jobs' durations (seconds)."""

    p50: float
    p90: float
    based_on: int
    durations: tuple[float, ...]  # sorted, the sample itself

    def left(self, elapsed: float) -> float | None:
        """Seconds likely left for a job running for `elapsed` seconds: the median of the
        similar jobs that ran at least that long, less `elapsed`. None past the p90: too
        few jobs ran that long to say."""
        if elapsed > self.p90:
            return None
        longer = [d for d in self.durations if d >= elapsed]
        return max(0.0, quantile(longer, 0.5) - elapsed)

    def slow(self, elapsed: float) -> bool:
        """Running longer than 90% of the similar jobs."""
        return elapsed > self.p90


def estimate_of(durations: Sequence[float], *, min_jobs: int) -> Estimate | None:
    """The estimate of these durations, or None with fewer than `min_jobs` of them."""
    ordered = tuple(sorted(max(0.0, d) for d in durations))
    if len(ordered) < max(1, min_jobs):
        return None
    return Estimate(
        p50=quantile(ordered, 0.5),
        p90=quantile(ordered, 0.9),
        based_on=len(ordered),
        durations=ordered,
    )


@dataclass(slots=True)
class _Entry:
    read_at: float  # monotonic seconds
    recent: deque[float]  # durations, the most recent first
    estimate: Estimate | None


class EstimateCache:
    """The recent durations and their estimate per provider and kind, and when they were
    read (monotonic seconds): a body reads the estimate without a query; `stale` says
    when to read again; a success in this process is added at once (`record`), so the
    estimate follows local jobs without a query and other processes' at the next read."""

    def __init__(self, *, min_jobs: int = 5, limit: int = 200) -> None:
        self.min_jobs = min_jobs
        self.limit = limit
        self._entries: dict[tuple[str, str], _Entry] = {}

    def peek(self, provider: str, kind: str) -> Estimate | None:
        entry = self._entries.get((provider, kind))
        return entry.estimate if entry is not None else None

    def stale(self, provider: str, kind: str, *, now: float, ttl: float) -> bool:
        entry = self._entries.get((provider, kind))
        return entry is None or now - entry.read_at >= ttl

    def put(self, provider: str, kind: str, recent: Sequence[float], *, now: float) -> None:
        """What a read found: `recent` durations, the most recent first."""
        kept = deque(recent[: self.limit], maxlen=self.limit)
        self._entries[(provider, kind)] = _Entry(now, kept, self._of(kept))

    def record(self, provider: str, kind: str, duration: float) -> None:
        """A job of this kind that just succeeded here (nothing to do before the first
        read: that read finds it in the database)."""
        entry = self._entries.get((provider, kind))
        if entry is None:
            return
        entry.recent.appendleft(duration)
        entry.estimate = self._of(entry.recent)

    def _of(self, recent: Sequence[float]) -> Estimate | None:
        return estimate_of(recent, min_jobs=self.min_jobs)
