"""When a pooled connection is pinged before use (app/core/pool_ping.py)."""

from __future__ import annotations

from app.core.pool_ping import RETURNED_AT, needs_ping


def test_a_new_connection_is_not_pinged() -> None:
    assert not needs_ping({}, now=100.0, after=0.0)


def test_a_connection_is_pinged_once_idle_for_the_limit() -> None:
    info = {RETURNED_AT: 10.0}
    assert not needs_ping(info, now=10.9, after=1.0)
    assert needs_ping(info, now=11.0, after=1.0)


def test_a_limit_of_zero_pings_every_reuse() -> None:
    assert needs_ping({RETURNED_AT: 10.0}, now=10.0, after=0.0)
