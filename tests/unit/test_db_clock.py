"""The database's clock (app/core/db/db_clock.py): the last reading of the reference plus
monotonic time since, the fastest of several reads kept, skew declared only when several
reads show it, and a wall clock that jumps while the process runs caught at once. The
host's wall clock, its monotonic clock and the reference are stand-ins moved by the test;
tests/integration/test_clock_skew.py and test_clock_jump_process.py use the real ones."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.core.db.db_clock import SAMPLES, ClockHealth, DatabaseClock, MeasureRefused
from app.core.runtime.clock import FakeClock

START = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = 3600.0


class Host:
    """A host: a wall clock (which can jump) and a monotonic clock (which cannot)."""

    def __init__(self, wall: datetime) -> None:
        self.wall = FakeClock(wall)
        self.mono_s = 1000.0

    def mono(self) -> float:
        return self.mono_s

    def tick(self, seconds: float) -> None:
        """Real time passes: both clocks move."""
        self.wall.advance(seconds)
        self.mono_s += seconds

    def jump(self, seconds: float) -> None:
        """The wall clock is stepped (NTP, an operator, a VM resumed): only it moves."""
        self.wall.advance(seconds)


class Reference:
    """A database whose clock reads `offset` seconds off the host's true time; each read
    takes the next of `trips` (seconds of real time, the reference read at its middle)."""

    is_sqlite = False

    def __init__(self, host: Host, offset: float = 0.0, trips: Iterator[float] | None = None):
        self.host, self.offset = host, offset
        self.true = host.wall.now()  # the true time, which the wall clock may leave
        self.trips = trips
        self.reads = 0

    def advance(self, seconds: float) -> None:
        self.true += timedelta(seconds=seconds)
        self.host.tick(seconds)

    def read(self) -> Any:
        outer = self

        class Txn:
            async def __aenter__(self) -> Txn:
                return self

            async def __aexit__(self, *exc: object) -> None:
                return None

            async def execute(self, statement: Any) -> Any:
                trip = next(outer.trips) if outer.trips is not None else 0.01
                outer.reads += 1
                outer.advance(trip / 2)
                seen = outer.true + timedelta(seconds=outer.offset)
                outer.advance(trip / 2)

                class Result:
                    def scalar_one(self) -> datetime:
                        return seen

                return Result()

        return Txn()


def clock_on(host: Host, **kw: Any) -> DatabaseClock:
    return DatabaseClock(host.wall, limit_seconds=2.0, monotonic=host.mono, **kw)


async def test_now_is_the_last_reading_plus_monotonic_time_since() -> None:
    host = Host(START + timedelta(hours=1))  # the wall clock is an hour ahead
    db = Reference(host, offset=-HOUR)  # of the database's
    clock = clock_on(host)
    offset = await clock.measure(db)  # type: ignore[arg-type]
    assert offset == pytest.approx(-HOUR)
    assert db.reads == SAMPLES
    read_at = db.true + timedelta(seconds=-HOUR)
    assert abs((clock.now() - read_at).total_seconds()) < 0.01
    assert "clock skew" in (clock.health.refusal() or "")
    assert "+3600.000 s" in (clock.health.refusal() or "")
    db.advance(10)
    assert abs((clock.now() - (read_at + timedelta(seconds=10))).total_seconds()) < 0.01


@pytest.mark.parametrize("jump", [HOUR, -HOUR])
async def test_a_wall_clock_that_jumps_while_running_moves_no_time_and_is_caught_at_once(
    jump: float,
) -> None:
    host = Host(START)
    db = Reference(host)
    clock = clock_on(host)
    await clock.measure(db)  # type: ignore[arg-type]
    assert clock.health.refusal() is None
    db.advance(5)
    before = clock.now()
    host.jump(jump)  # stepped while the process runs, between two measurements
    after = clock.now()
    assert abs((after - before).total_seconds()) < 0.001  # time did not move with it
    refusal = clock.health.refusal() or ""
    assert refusal.startswith("clock jump"), refusal
    assert f"{jump:+.3f} s" in refusal
    db.advance(1)
    assert abs((clock.now() - before).total_seconds() - 1) < 0.001
    # Measured again: the wall clock is now an hour off the database's, so it is skewed
    # (still no claims), but time is still the database's.
    await clock.measure(db)  # type: ignore[arg-type]
    assert clock.health.jump_seconds is None
    assert (clock.health.refusal() or "").startswith("clock skew")
    assert clock.health.offset_seconds == pytest.approx(-jump, abs=0.01)
    assert abs((clock.now() - db.true).total_seconds()) < 0.01
    # The wall clock is set right again: trusted at the next measurement.
    host.jump(-jump)
    assert (clock.health.refusal() or "").startswith("clock jump")
    await clock.measure(db)  # type: ignore[arg-type]
    assert clock.health.refusal() is None


async def test_a_small_drift_is_no_jump() -> None:
    host = Host(START)
    db = Reference(host)
    clock = clock_on(host)
    await clock.measure(db)  # type: ignore[arg-type]
    host.jump(1.5)  # within the 2 s bound
    clock.now()
    assert clock.health.refusal() is None


async def test_the_fastest_read_is_kept_and_slow_reads_are_discarded() -> None:
    """A busy event loop stretches a read's round trip; its midpoint then says little.
    Of 0.4, 3.0, 0.05, 2.0 and 0.3 s, only 0.05 s is kept (and 3.0 and 2.0 never count)."""
    host = Host(START)
    db = Reference(host, offset=0.7, trips=iter([0.4, 3.0, 0.05, 2.0, 0.3]))
    clock = clock_on(host)
    offset = await clock.measure(db)  # type: ignore[arg-type]
    assert offset == pytest.approx(0.7, abs=1e-6)


async def test_a_measurement_with_only_slow_reads_changes_nothing() -> None:
    host = Host(START)
    db = Reference(host, trips=iter([0.01] * SAMPLES))
    clock = clock_on(host)
    await clock.measure(db)  # type: ignore[arg-type]
    db.trips = iter([4.0] * SAMPLES)
    with pytest.raises(MeasureRefused, match="JOBGATE_CLOCK_MAX_ROUND_TRIP_SECONDS"):
        await clock.measure(db)  # type: ignore[arg-type]
    assert clock.health.refusal() is None  # not declared skewed: nothing was learnt
    assert not await clock.try_measure(db)  # type: ignore[arg-type]


async def test_skew_is_never_declared_on_one_read() -> None:
    """One kept read whose midpoint is far off (its trip 0.45 s, within the bound, but
    the others slower than the bound) does not make the process skewed; a second read
    showing the same does."""
    host = Host(START)
    db = Reference(host, trips=iter([0.01] * SAMPLES))
    clock = clock_on(host, max_round_trip_seconds=0.5)
    await clock.measure(db)  # type: ignore[arg-type]
    db.offset = 5.0
    db.trips = iter([0.45, 9.0, 9.0, 9.0, 9.0])
    await clock.measure(db)  # type: ignore[arg-type]
    assert clock.health.refusal() is None and not clock.health.skewed
    db.trips = iter([0.45, 0.3, 9.0, 9.0, 9.0])
    await clock.measure(db)  # type: ignore[arg-type]
    assert (clock.health.refusal() or "").startswith("clock skew")


async def test_a_jump_during_a_read_discards_that_read() -> None:
    host = Host(START)
    clock = clock_on(host)

    class Jumpy(Reference):
        def read(self) -> Any:
            if self.reads == 0:
                self.host.jump(HOUR)  # stepped between the read's two wall readings
            return super().read()

    db = Jumpy(host)
    await clock.measure(db)  # type: ignore[arg-type]
    # the first read straddled the jump: discarded; the others see an hour's offset
    assert clock.health.offset_seconds == pytest.approx(-HOUR, abs=0.1)


async def test_sqlite_without_a_boot_anchor_is_its_own_reference() -> None:
    """No boot id (not Linux): the host's clock is the reference, as docs/operations.md
    says; tests/unit/test_host_anchor.py covers the anchor."""

    class Sqlite:
        is_sqlite = True

    host = Host(START + timedelta(hours=1))
    clock = clock_on(host, boot_id=lambda: None)
    assert await clock.measure(Sqlite()) == 0.0  # type: ignore[arg-type]
    assert clock.now() == host.wall.now() and clock.health.refusal() is None
    host.jump(-HOUR)  # a jump is caught on SQLite too
    assert (clock.health.refusal() or "").startswith("clock jump")
    assert clock.now() == START + timedelta(hours=1)


def test_a_test_clock_is_always_trusted() -> None:
    assert ClockHealth().refusal() is None


async def test_not_measured_yet_is_refused() -> None:
    clock = clock_on(Host(START))
    assert clock.health.refusal() == "clock not measured against the database yet"
