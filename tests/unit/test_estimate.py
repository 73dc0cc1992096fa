"""The estimate's arithmetic: none below the minimum, every number within the range of
the durations it was learned from, nothing said past the p90."""

from __future__ import annotations

import random

import pytest

from app.operations.domain.estimate import estimate_of, quantile


def test_no_estimate_below_the_minimum() -> None:
    assert estimate_of([10.0] * 4, min_jobs=5) is None
    assert estimate_of([], min_jobs=1) is None
    est = estimate_of([10.0] * 5, min_jobs=5)
    assert est is not None and est.p50 == est.p90 == 10.0 and est.based_on == 5


@pytest.mark.parametrize("seed", range(20))
def test_quantiles_and_time_left_stay_within_what_was_seen(seed: int) -> None:
    rng = random.Random(seed)
    durations = [rng.lognormvariate(3, 1) for _ in range(rng.randint(5, 60))]
    est = estimate_of(durations, min_jobs=5)
    assert est is not None
    lo, hi = min(durations), max(durations)
    assert lo <= est.p50 <= est.p90 <= hi
    for elapsed in (0.0, est.p50 / 2, est.p50, est.p90):
        left = est.left(elapsed)
        assert left is not None and 0 <= left <= hi - min(elapsed, lo) + 1e-9
        assert elapsed + left <= hi + 1e-9
        assert not est.slow(elapsed)
    assert est.left(est.p90 + 0.1) is None and est.slow(est.p90 + 0.1)


def test_quantile_interpolates_between_neighbours() -> None:
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.9) == pytest.approx(3.7)


def test_the_cache_adds_local_successes_without_a_read() -> None:
    from app.operations.domain.estimate import EstimateCache

    cache = EstimateCache(min_jobs=3, limit=4)
    cache.record("mock", "report", 5.0)  # before the first read: the read will find it
    assert cache.peek("mock", "report") is None
    assert cache.stale("mock", "report", now=0.0, ttl=30)
    cache.put("mock", "report", [10.0, 20.0], now=0.0)
    assert cache.peek("mock", "report") is None  # two: fewer than the minimum
    assert not cache.stale("mock", "report", now=29.0, ttl=30)
    cache.record("mock", "report", 30.0)
    est = cache.peek("mock", "report")
    assert est is not None and est.based_on == 3 and est.p50 == 20.0
    for _ in range(3):  # the newest `limit` only
        cache.record("mock", "report", 100.0)
    est = cache.peek("mock", "report")
    assert est is not None and est.based_on == 4 and est.durations == (30.0, 100.0, 100.0, 100.0)
    assert cache.stale("mock", "report", now=30.0, ttl=30)
