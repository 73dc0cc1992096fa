"""Poll delays: Retry-After wins, then the poll hint, then capped exponential full jitter."""

from __future__ import annotations

import math
import random

import pytest

from app.providers.answers.backoff import backoff_ceiling, next_poll_delay
from app.providers.language.profile import PollingPolicy

POLICY = PollingPolicy(initial_seconds=2, factor=2, cap_seconds=60, min_seconds=1, max_seconds=300)
NO_JITTER = POLICY.model_copy(update={"jitter": "none"})


def delay(
    policy: PollingPolicy = POLICY,
    attempt: int = 0,
    seed: int = 1,
    *,
    retry_after: float | None = None,
    poll_hint: float | None = None,
    time_scale: float = 1.0,
) -> float:
    rng = random.Random(seed)
    return next_poll_delay(
        policy, attempt, rng, retry_after=retry_after, poll_hint=poll_hint, time_scale=time_scale
    )


def test_defaults_match_the_spec() -> None:
    default = PollingPolicy()
    assert (default.initial_seconds, default.factor, default.cap_seconds) == (2, 2, 60)
    assert default.jitter == "full"


def test_without_jitter_the_delay_doubles_up_to_the_cap() -> None:
    got = [delay(NO_JITTER, attempt) for attempt in range(8)]
    assert got == [2, 4, 8, 16, 32, 60, 60, 60]


def test_full_jitter_stays_within_min_and_the_ceiling() -> None:
    for attempt in range(12):
        ceiling = backoff_ceiling(POLICY, attempt)
        for seed in range(200):
            value = delay(POLICY, attempt, seed)
            assert POLICY.min_seconds <= value <= max(ceiling, POLICY.min_seconds)


def test_seeded_rng_is_deterministic() -> None:
    first = [delay(POLICY, a, seed=42) for a in range(10)]
    assert first == [delay(POLICY, a, seed=42) for a in range(10)]
    rng_a, rng_b = random.Random(7), random.Random(7)
    seq_a = [next_poll_delay(POLICY, a, rng_a, retry_after=None, poll_hint=None) for a in range(6)]
    seq_b = [next_poll_delay(POLICY, a, rng_b, retry_after=None, poll_hint=None) for a in range(6)]
    assert seq_a == seq_b


def test_retry_after_wins_and_is_never_jittered_below() -> None:
    for seed in range(200):
        assert delay(POLICY, 5, seed, retry_after=7.0, poll_hint=30.0) == 7.0


def test_provider_delays_do_not_consume_the_rng() -> None:
    rng = random.Random(3)
    next_poll_delay(POLICY, 0, rng, retry_after=7.0, poll_hint=None)
    next_poll_delay(POLICY, 0, rng, retry_after=None, poll_hint=5.0)
    assert rng.random() == random.Random(3).random()


def test_poll_hint_is_used_when_there_is_no_retry_after() -> None:
    assert delay(POLICY, 9, poll_hint=30.0) == 30.0


@pytest.mark.parametrize(
    ("retry_after", "poll_hint", "expected"),
    [
        (10_000.0, None, 300.0),  # clamped to max_seconds
        (0.0, None, 1.0),  # clamped up to min_seconds
        (None, 0.2, 1.0),
        (None, 900.0, 300.0),
        (math.inf, None, 300.0),
    ],
)
def test_provider_delays_are_clamped(
    retry_after: float | None, poll_hint: float | None, expected: float
) -> None:
    assert delay(POLICY, 0, retry_after=retry_after, poll_hint=poll_hint) == expected


def test_broken_provider_values_are_ignored() -> None:
    assert delay(NO_JITTER, 0, retry_after=math.nan, poll_hint=-4.0) == 2.0
    assert delay(NO_JITTER, 1, retry_after=-1.0, poll_hint=None) == 4.0


def test_time_scale_multiplies_the_final_delay() -> None:
    assert delay(POLICY, 0, retry_after=7.0, time_scale=0.01) == pytest.approx(0.07)
    assert delay(NO_JITTER, 3, time_scale=0.5) == 8.0
    assert delay(POLICY, 3, seed=9, time_scale=0.01) == pytest.approx(
        delay(POLICY, 3, seed=9) / 100
    )
    with pytest.raises(ValueError):
        delay(POLICY, 0, time_scale=-1.0)


def test_huge_attempts_stay_at_the_cap() -> None:
    assert backoff_ceiling(POLICY, 10_000) == 60.0
    assert delay(NO_JITTER, 10_000) == 60.0
    assert delay(NO_JITTER, -3) == 2.0


def test_min_floor_applies_to_jitter() -> None:
    floor = POLICY.model_copy(update={"min_seconds": 5.0})
    assert all(delay(floor, 0, seed) == 5.0 for seed in range(50))  # ceiling 2 < min 5
