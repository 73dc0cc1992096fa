"""How long to wait before the next status poll: pure, seeded, testable.

Order of precedence (docs/agent-api.md, "Retry rules"): the provider's ``Retry-After`` wins, then
its own poll hint, then our capped exponential backoff. Provider-given delays
are only clamped to the profile's ``[min_seconds, max_seconds]`` and never
jittered, so we never come back earlier than a provider asked. The computed
backoff uses "full jitter" (uniform in ``[0, d]``) to spread many observers
apart, floored at ``min_seconds`` so a zero draw cannot become a hot loop.
"""

from __future__ import annotations

import math
import random

from app.providers.language.profile import PollingPolicy


def _usable(value: float | None) -> float | None:
    # NaN or negative values from a broken header/body are ignored, not trusted.
    if value is None or math.isnan(value) or value < 0:
        return None
    return value


def _clamp(value: float, policy: PollingPolicy) -> float:
    return min(max(value, policy.min_seconds), policy.max_seconds)


def backoff_ceiling(policy: PollingPolicy, attempt: int) -> float:
    """The un-jittered exponential delay ``initial * factor**attempt``, capped."""
    attempt = max(attempt, 0)
    try:
        delay = policy.initial_seconds * policy.factor**attempt
    except OverflowError:  # a very long-running job: we are at the cap anyway
        delay = math.inf
    return min(delay, policy.cap_seconds)


def next_poll_delay(
    policy: PollingPolicy,
    attempt: int,
    rng: random.Random,
    *,
    retry_after: float | None,
    poll_hint: float | None,
    time_scale: float = 1.0,
) -> float:
    """Seconds to wait before poll number ``attempt + 1`` (``attempt`` counts from 0).

    ``retry_after`` (parsed Retry-After) wins over ``poll_hint`` (the provider's
    body hint), which wins over the computed backoff. The result is multiplied by
    ``time_scale`` (``JOBGATE_TIME_SCALE``; tests use e.g. 0.01). The rng is drawn
    from only when jitter is used, so a seeded rng gives a reproducible sequence.
    """
    if time_scale < 0 or math.isnan(time_scale):
        raise ValueError("time_scale must be a non-negative number")
    given = _usable(retry_after)
    if given is None:
        given = _usable(poll_hint)
    if given is not None:
        delay = _clamp(given, policy)
    else:
        ceiling = backoff_ceiling(policy, attempt)
        if policy.jitter == "full":
            delay = max(policy.min_seconds, rng.uniform(0.0, ceiling))
        else:
            delay = max(policy.min_seconds, ceiling)
        delay = min(delay, policy.max_seconds)
    return delay * time_scale
