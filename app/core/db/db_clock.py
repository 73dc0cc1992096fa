"""The database's clock: every lease, due time and deadline is read from one reference.

Each process computes times; two processes whose host clocks disagree would disagree
about when a lease lapses, when a poll is due and when a deadline passes (an observer an
hour ahead fires deadlines early and takes over leases that are still held). So a
process reads the database's clock (`SELECT clock_timestamp()` on PostgreSQL) at start
and every `JOBGATE_CLOCK_CHECK_SECONDS`, and its `now()` is that last reading plus the
monotonic time elapsed since: the host's wall clock is not in it, so a wall clock
stepped while the process runs moves no time it computes. On SQLite the database is a
file on this host with no clock of its own: the reference is this boot's anchor, the
host's wall time and `CLOCK_BOOTTIME` written once by the first process of the boot and
read by all (app/core/db/host_anchor.py), plus `CLOCK_BOOTTIME` since, so a wall clock
stepped later shows as skew here too; where there is no anchor (no boot id or no
`CLOCK_BOOTTIME`: not Linux) the host's clock read at the measurement is the reference.

One measurement is several reads (`SAMPLES`); a read whose round trip took longer than
`JOBGATE_CLOCK_MAX_ROUND_TRIP_SECONDS` (a busy event loop, a slow network) is discarded,
and the one with the shortest round trip is kept, its midpoint standing for the moment
it was read. The offset (the database's clock minus the host's) is watched, not used:
beyond `JOBGATE_CLOCK_SKEW_LIMIT_SECONDS` in at least two kept reads, the host clock is
not trusted (it may be stepped at any moment, and other code reads it); one read alone
never declares it. The wall clock is also compared with monotonic time at every `now()`:
when the two moved apart by more than the limit since the last measurement, the wall
clock jumped, and the process says so at once and claims nothing until it is measured
again (at once). Skewed, jumped or not measured yet, the process says so in its log, in
`/v1/readyz` and in `/metrics`, and its observer claims nothing (docs/operations.md,
"Clocks").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import text

from app.core.db import host_anchor
from app.core.db.database import Database
from app.core.obs import telemetry
from app.core.runtime.clock import Clock

log = logging.getLogger(__name__)

REFERENCE_SQL = "SELECT clock_timestamp()"
RETRY_SECONDS = 1.0  # after a failed measurement (the database away), at most this long
SAMPLES = 5  # reads of the database's clock per measurement; the fastest one is kept
SKEW_WITNESSES = 2  # kept reads that must each show the skew before it is declared
JUMP_CHECK_SECONDS = 0.5  # how often the measuring loop compares wall and monotonic time

Monotonic = Callable[[], float]

# What a skew on SQLite tells the operator: the anchor is kept until told otherwise.
ANCHOR_WAY_OUT = (
    "; the reference is this boot's clock anchor (SQLite): set the host's clock right, or, "
    "if the anchor was taken while the clock was wrong, run `jobgate clock --adopt-host`"
)


@dataclass
class ClockHealth:
    """The last measurement, as readiness, metrics and the observer read it."""

    limit_seconds: float = math.inf
    offset_seconds: float = 0.0
    measured: bool = True  # a clock that needs no measuring (a test's)
    skewed: bool = False  # the offset is beyond the limit in enough reads
    jump_seconds: float | None = None  # the wall clock's jump seen since the measurement
    watch: Callable[[], object] | None = None  # looks for a jump first (the clock's own)
    anchored: bool = False  # the reference is this boot's anchor (SQLite on Linux)

    def refusal(self) -> str | None:
        """Why this process must not claim work now; None when its clock is trusted."""
        if self.watch is not None:
            self.watch()
        if not self.measured:
            return "clock not measured against the database yet"
        if self.jump_seconds is not None:
            return self.jump_words()
        if self.skewed:
            words = (
                f"clock skew: this host's clock is {-self.offset_seconds:+.3f} s off the "
                f"database's, beyond the bound of {self.limit_seconds:g} s "
                "(JOBGATE_CLOCK_SKEW_LIMIT_SECONDS)"
            )
            return words + ANCHOR_WAY_OUT if self.anchored else words
        return None

    def jump_words(self) -> str:
        return (
            f"clock jump: this host's wall clock moved {self.jump_seconds or 0.0:+.3f} s "
            "against monotonic time since the last measurement; claiming nothing until it "
            "is measured again"
        )


@dataclass(frozen=True)
class Sample:
    """One read of the reference: its value, and this host's wall and monotonic time at
    the round trip's midpoint."""

    reference: datetime
    wall: datetime
    mono: float
    trip: float  # seconds, monotonic

    @property
    def offset(self) -> float:
        return (self.reference - self.wall).total_seconds()


def choose(samples: list[Sample], max_trip: float) -> Sample | None:
    """The read with the shortest round trip within `max_trip`; None if none is."""
    kept = [s for s in samples if s.trip <= max_trip]
    return min(kept, key=lambda s: s.trip) if kept else None


def skew_shown(samples: list[Sample], max_trip: float, limit: float) -> bool:
    """Whether at least `SKEW_WITNESSES` kept reads each show the offset beyond `limit`,
    on the same side, even allowing for half their round trip."""
    kept = [s for s in samples if s.trip <= max_trip]
    ahead = sum(1 for s in kept if s.offset - s.trip / 2 > limit)
    behind = sum(1 for s in kept if s.offset + s.trip / 2 < -limit)
    return max(ahead, behind) >= SKEW_WITNESSES


class MeasureRefused(Exception):
    """No read of the reference was good enough to keep (every round trip too long)."""


class DatabaseClock:
    """The database's last reading plus monotonic time since; the host's wall clock only
    watched."""

    def __init__(
        self,
        host: Clock,
        *,
        limit_seconds: float,
        max_round_trip_seconds: float = 0.5,
        monotonic: Monotonic = time.monotonic,
        boot_id: host_anchor.BootId = host_anchor.read_boot_id,
        boottime: host_anchor.Boottime = host_anchor.read_boottime,
    ) -> None:
        self.host = host
        self._boot_id, self._boottime = boot_id, boottime
        self.health = ClockHealth(limit_seconds=limit_seconds, measured=False)
        self.health.watch = self.check_jump
        self.max_round_trip = max_round_trip_seconds
        self._mono = monotonic
        self._anchor: Sample | None = None  # the reading `now()` counts from

    def now(self) -> datetime:
        anchor = self._anchor
        if anchor is None:
            return self.host.now()  # not measured yet: nothing else to go by (and no claim)
        self.check_jump()
        return anchor.reference + timedelta(seconds=self._mono() - anchor.mono)

    def check_jump(self) -> float | None:
        """Compare the wall clock's move since the measurement with monotonic time's; a
        difference beyond the limit is a jump, refused until measured again. The jump
        in seconds, when there is one."""
        anchor = self._anchor
        if anchor is None:
            return None
        elapsed = self._mono() - anchor.mono
        moved = (self.host.now() - anchor.wall).total_seconds()
        jump = moved - elapsed
        if abs(jump) <= self.health.limit_seconds:
            return None
        if self.health.jump_seconds is None:
            self.health.jump_seconds = jump
            telemetry.clock_jumped(jump, self.health.jump_words())
        return jump

    async def sleep(self, seconds: float) -> None:
        await self.host.sleep(seconds)  # a duration: the reference does not change it

    def _timed(self, reference: datetime, w0: datetime, m0: float) -> Sample:
        """A read of `reference` begun at wall `w0`, monotonic `m0`, ended now."""
        m1, w1 = self._mono(), self.host.now()
        trip = m1 - m0
        wall_trip = (w1 - w0).total_seconds()
        if abs(wall_trip - trip) > self.health.limit_seconds:  # the wall clock jumped mid-read
            trip = math.inf
        return Sample(reference, w0 + (w1 - w0) / 2, m0 + trip / 2, trip)

    async def _sample(self, db: Database) -> Sample:
        async with db.read() as txn:
            w0, m0 = self.host.now(), self._mono()
            reference: datetime = (await txn.execute(text(REFERENCE_SQL))).scalar_one()
            return self._timed(reference, w0, m0)

    async def _host_samples(self, db: Database) -> list[Sample]:
        """SQLite's reads: this boot's anchor plus `CLOCK_BOOTTIME` since, `SAMPLES` times
        (no round trip to speak of); without an anchor, the host's clock itself."""
        boot_id, boottime = self._boot_id(), self._boottime()
        if boot_id is None or boottime is None:
            self.health.anchored = False
            wall, mono = self.host.now(), self._mono()
            return [Sample(wall, wall, mono, 0.0)]
        anchor = await host_anchor.shared_anchor(db, boot_id, self.host.now(), boottime)
        self.health.anchored = True
        samples = []
        for _ in range(SAMPLES):
            w0, m0 = self.host.now(), self._mono()
            now_boot = self._boottime()
            reference = anchor.at(boottime if now_boot is None else now_boot)
            samples.append(self._timed(reference, w0, m0))
        return samples

    async def measure(self, db: Database) -> float:
        """Read the reference `SAMPLES` times and count from the best read; returns the
        offset (reference minus host, seconds). Raises when the database cannot be read
        or no read was fast enough (`MeasureRefused`): the last reading stays."""
        if db.is_sqlite:
            samples = await self._host_samples(db)
        else:
            samples = [await self._sample(db) for _ in range(SAMPLES)]
        best = choose(samples, self.max_round_trip)
        if best is None:
            trips = ", ".join(f"{s.trip:.3f}" for s in samples)
            raise MeasureRefused(
                f"every read of the database's clock took longer than "
                f"{self.max_round_trip:g} s (JOBGATE_CLOCK_MAX_ROUND_TRIP_SECONDS): {trips} s"
            )
        was = self.health.refusal()
        self._anchor = best
        health = self.health
        health.offset_seconds = best.offset
        health.measured = True
        health.jump_seconds = None
        if abs(best.offset) <= health.limit_seconds:
            health.skewed = False
        elif skew_shown(samples, self.max_round_trip, health.limit_seconds):
            health.skewed = True
        # else: one read alone shows it; the verdict stands until more reads agree
        telemetry.clock_measured(health.offset_seconds, health.refusal(), was)
        return health.offset_seconds

    async def try_measure(self, db: Database) -> bool:
        """`measure`, logging instead of raising; True when it measured."""
        try:
            await self.measure(db)
        except MeasureRefused as refused:
            log.warning("clock not measured: %s; trying again", refused)
            return False
        except Exception:  # the database away: keep the last reading, try again soon
            log.warning("could not measure the clock against the database", exc_info=True)
            return False
        return True

    async def keep_measuring(self, db: Database, every: float, *, ok: bool) -> None:
        """Measure every `every` (monotonic) seconds until cancelled; sooner after a
        failure (`ok`: whether the last measurement worked), and at once after a jump of
        the wall clock (checked every `JUMP_CHECK_SECONDS`)."""
        while True:
            wait = every if ok else min(every, RETRY_SECONDS)
            ends = self._mono() + wait
            while self._mono() < ends:
                if ok and self.check_jump() is not None:
                    break  # measure again now (after a failure: at the retry's pace)
                await asyncio.sleep(min(JUMP_CHECK_SECONDS, max(0.0, ends - self._mono())))
            ok = await self.try_measure(db)


async def measure_once(clock: Clock, db: Database) -> None:
    """For a short-lived command (the operator CLI, `keys`): one measurement, if the clock
    is a `DatabaseClock`; when it fails the host clock stands (the log says so)."""
    if isinstance(clock, DatabaseClock):
        await clock.try_measure(db)


@contextlib.asynccontextmanager
async def measuring(clock: Clock, db: Database, every: float) -> AsyncIterator[None]:
    """While inside: a `DatabaseClock` is measured at once, then every `every` seconds.
    Any other clock (a test's) is left alone."""
    if not isinstance(clock, DatabaseClock):
        yield
        return
    ok = await clock.try_measure(db)
    task = asyncio.create_task(clock.keep_measuring(db, every, ok=ok))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
