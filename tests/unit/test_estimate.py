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
