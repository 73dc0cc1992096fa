"""The database's clock (app/core/db/db_clock.py): the host clock corrected by the offset
measured at the round trip's midpoint, and the bound beyond which a process is not
trusted to claim work. The reference is a stand-in here; tests/integration/
test_clock_skew.py measures against the real database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.core.db.db_clock import ClockHealth, DatabaseClock
from app.core.runtime.clock import FakeClock

START = datetime(2026, 1, 1, tzinfo=UTC)


class Reference:
    """A database whose clock reads `reference` while the round trip takes `trip` s of
    the host's clock (the host clock moves forward during the read)."""

    is_sqlite = False

    def __init__(self, host: FakeClock, reference: datetime, trip: float) -> None:
        self.host, self.reference, self.trip = host, reference, trip

    def read(self) -> Any:
        outer = self

        class Txn:
            async def __aenter__(self) -> Txn:
                return self

            async def __aexit__(self, *exc: object) -> None:
                return None

            async def execute(self, statement: Any) -> Any:
                outer.host.advance(outer.trip / 2)
                seen = outer.reference
                outer.host.advance(outer.trip / 2)

                class Result:
                    def scalar_one(self) -> datetime:
                        return seen

                return Result()

        return Txn()


async def test_now_is_the_host_clock_plus_the_offset_at_the_round_trip_midpoint() -> None:
    host = FakeClock(START + timedelta(hours=1))  # an hour ahead of the database
    clock = DatabaseClock(host, limit_seconds=2.0)
    db = Reference(host, START + timedelta(seconds=0.5), trip=1.0)
    offset = await clock.measure(db)  # type: ignore[arg-type]
    # host read at +1h (sent) and +1h+1s (answered): midpoint +1h+0.5s = the reference.
    assert offset == pytest.approx(-3600.0)
    assert clock.now() == host.now() - timedelta(hours=1)
    assert clock.health.refusal() is not None
    assert "clock skew" in (clock.health.refusal() or "")
    assert "+3600.000 s" in (clock.health.refusal() or "")


async def test_within_the_bound_the_process_is_trusted_and_measured_again_after() -> None:
    host = FakeClock(START)
    clock = DatabaseClock(host, limit_seconds=2.0)
    assert clock.health.refusal() == "clock not measured against the database yet"
    db = Reference(host, START + timedelta(seconds=1.5), trip=0.0)
    assert await clock.measure(db) == pytest.approx(1.5)  # type: ignore[arg-type]
    assert clock.health.refusal() is None
    db.reference = host.now() + timedelta(seconds=2.5)  # the host clock was stepped back
    await clock.measure(db)  # type: ignore[arg-type]
    assert clock.health.refusal() is not None
    db.reference = host.now()
    await clock.measure(db)  # type: ignore[arg-type]
    assert clock.health.refusal() is None and clock.now() == host.now()


async def test_sqlite_is_its_own_reference() -> None:
    class Sqlite:
        is_sqlite = True

    host = FakeClock(START + timedelta(hours=1))
    clock = DatabaseClock(host, limit_seconds=2.0)
    assert await clock.measure(Sqlite()) == 0.0  # type: ignore[arg-type]
    assert clock.now() == host.now() and clock.health.refusal() is None


def test_a_test_clock_is_always_trusted() -> None:
    assert ClockHealth().refusal() is None
