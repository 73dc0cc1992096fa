"""SQLite's reference clock (app/core/db/host_anchor.py): one anchor per boot, taken by the
first process to measure and read by every other, so a step of the host's wall clock
moves no time and shows as skew. The wall clock, monotonic time, the boot id and
CLOCK_BOOTTIME are stand-ins moved by the test; the database is a real SQLite file built
by `alembic upgrade head`."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.core.db import host_anchor
from app.core.db.database import Database
from app.core.db.db_clock import DatabaseClock
from app.core.db.migrate import upgrade
from app.core.runtime.clock import FakeClock

START = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = 3600.0
BOOT = "9d1e6d0a-0000-4000-8000-000000000001"


class Host:
    """A host: a wall clock that can be stepped, monotonic time and CLOCK_BOOTTIME that
    cannot, and the id of its boot."""

    def __init__(self, wall: datetime = START) -> None:
        self.wall = FakeClock(wall)
        self.mono_s = 1000.0
        self.boot_s = 500.0
        self.boot: str | None = BOOT

    def tick(self, seconds: float) -> None:
        self.wall.advance(seconds)
        self.mono_s += seconds
        self.boot_s += seconds

    def step(self, seconds: float) -> None:
        self.wall.advance(seconds)

    def reboot(self, wall: datetime) -> None:
        self.boot, self.boot_s = "9d1e6d0a-0000-4000-8000-000000000002", 3.0
        self.wall = FakeClock(wall)

    def clock(self, wall: FakeClock | None = None) -> DatabaseClock:
        return DatabaseClock(
            wall or self.wall,
            limit_seconds=2.0,
            monotonic=lambda: self.mono_s,
            boot_id=lambda: self.boot,
            boottime=lambda: self.boot_s,
        )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("anchor") / "template.db"
    upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture
async def db(template: Path, tmp_path: Path) -> AsyncIterator[Database]:
    shutil.copy(template, tmp_path / "jobgate.db")
    database = Database(f"sqlite:///{tmp_path / 'jobgate.db'}")
    yield database
    await database.dispose()


def _close(a: datetime, b: datetime, within: float = 0.01) -> bool:
    return abs((a - b).total_seconds()) < within


async def test_a_wall_step_moves_no_time_and_the_measurement_after_it_declares_skew(
    db: Database,
) -> None:
    host = Host()
    clock = host.clock()
    assert await clock.measure(db) == pytest.approx(0.0)
    assert clock.health.refusal() is None and clock.health.anchored
    host.tick(10)
    true = START + timedelta(seconds=10)
    host.step(HOUR)  # an operator's `date -s`, an hour ahead
    assert _close(clock.now(), true)
    assert (clock.health.refusal() or "").startswith("clock jump")
    # Measured again at once: the anchor is kept, so the host is an hour off it.
    assert await clock.measure(db) == pytest.approx(-HOUR, abs=0.01)
    refusal = clock.health.refusal() or ""
    assert refusal.startswith("clock skew") and "+3600.000 s" in refusal, refusal
    assert "jobgate clock --adopt-host" in refusal
    assert _close(clock.now(), true)
    host.tick(5)
    assert _close(clock.now(), true + timedelta(seconds=5))
    host.step(-HOUR)  # set right again: trusted at the next measurement
    assert await clock.measure(db) == pytest.approx(0.0, abs=0.01)
    assert clock.health.refusal() is None


async def test_two_processes_of_one_boot_share_the_anchor(db: Database) -> None:
    host = Host()
    first = host.clock()
    await first.measure(db)  # takes the anchor
    host.tick(30)
    ahead = FakeClock(host.wall.now() + timedelta(hours=1))  # a second process, an hour off
    second = host.clock(ahead)
    assert await second.measure(db) == pytest.approx(-HOUR, abs=0.01)
    assert second.health.skewed
    assert _close(second.now(), first.now())
    assert _close(second.now(), START + timedelta(seconds=30))
    anchor = await host_anchor.read_anchor(db, BOOT)
    assert anchor is not None and anchor.wall == START and anchor.boottime == 500.0


async def test_a_new_boot_takes_a_new_anchor(db: Database) -> None:
    host = Host()
    await host.clock().measure(db)
    later = START + timedelta(days=2)
    host.reboot(later)  # CLOCK_BOOTTIME starts again; the old anchor means nothing now
    clock = host.clock()
    assert await clock.measure(db) == pytest.approx(0.0)
    assert clock.now() == later and clock.health.refusal() is None
    assert await host_anchor.read_anchor(db, BOOT) is None  # the old boot's row is gone
    assert host.boot is not None and await host_anchor.read_anchor(db, host.boot) is not None


async def test_adopting_the_host_clock_re_takes_the_anchor(db: Database) -> None:
    """The trap's way out: the anchor was taken while the host's clock was wrong, NTP
    stepped it right; `jobgate clock --adopt-host` makes the host's time the reference."""
    host = Host(START - timedelta(hours=1))  # wrong when the anchor was taken
    clock = host.clock()
    await clock.measure(db)
    host.step(HOUR)  # NTP sets it right
    await clock.measure(db)
    assert clock.health.skewed
    await host_anchor.adopt_host(db, BOOT, host.wall.now(), host.boot_s)
    assert await clock.measure(db) == pytest.approx(0.0)
    assert clock.health.refusal() is None and clock.now() == START


@pytest.mark.parametrize("missing", ["boot_id", "boottime"])
async def test_without_a_boot_id_or_boottime_the_host_is_the_reference(
    db: Database, missing: str
) -> None:
    host = Host(START + timedelta(hours=1))
    kw: dict[str, Any] = {missing: lambda: None}
    clock = DatabaseClock(
        host.wall,
        limit_seconds=2.0,
        monotonic=lambda: host.mono_s,
        **{"boot_id": lambda: host.boot, "boottime": lambda: host.boot_s, **kw},
    )
    assert await clock.measure(db) == 0.0
    assert clock.now() == host.wall.now() and not clock.health.anchored
    assert await host_anchor.read_anchor(db, BOOT) is None  # nothing written


def test_this_host_has_a_boot_id_and_boottime_or_says_none() -> None:
    boot, boottime = host_anchor.read_boot_id(), host_anchor.read_boottime()
    assert boot is None or len(boot) >= 8
    assert boottime is None or boottime > 0
