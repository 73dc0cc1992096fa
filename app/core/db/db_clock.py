"""The database's clock: every lease, due time and deadline is read from one reference.

Each process computes times with its own clock; two processes whose host clocks disagree
would disagree about when a lease lapses, when a poll is due and when a deadline passes
(an observer an hour ahead fires deadlines early and takes over leases that are still
held). So a process measures the offset between its host clock and the database's
(`SELECT clock_timestamp()` on PostgreSQL, the midpoint of the round trip standing for
the moment it was read) at start and every `JOBGATE_CLOCK_CHECK_SECONDS`, and its
`now()` is the host's time plus that offset: all processes sharing a database then
share one clock. On SQLite the database is a file on this host, so the host clock is
the reference and the offset is 0.

An offset beyond `JOBGATE_CLOCK_SKEW_LIMIT_SECONDS` means the host clock is not to be
trusted between two measurements (it may be stepped at any moment): the process says so
in its log, in `/v1/readyz` and in `/metrics`, and its observer claims nothing until a
measurement is within the bound again (docs/operations.md, "Clocks").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import text

from app.core.db.database import Database
from app.core.obs import telemetry
from app.core.runtime.clock import Clock

log = logging.getLogger(__name__)

REFERENCE_SQL = "SELECT clock_timestamp()"
RETRY_SECONDS = 1.0  # after a failed measurement (the database away), at most this long


@dataclass
class ClockHealth:
    """The last measurement, as readiness, metrics and the observer read it."""

    limit_seconds: float = math.inf
    offset_seconds: float = 0.0
    measured: bool = True  # a clock that needs no measuring (a test's, SQLite's host)

    def refusal(self) -> str | None:
        """Why this process must not claim work now; None when its clock is trusted."""
        if not self.measured:
            return "clock not measured against the database yet"
        if abs(self.offset_seconds) > self.limit_seconds:
            return (
                f"clock skew: this host's clock is {-self.offset_seconds:+.3f} s off the "
                f"database's, beyond the bound of {self.limit_seconds:g} s "
                "(JOBGATE_CLOCK_SKEW_LIMIT_SECONDS)"
            )
        return None


class DatabaseClock:
    """The host clock corrected by its measured offset to the database's clock."""

    def __init__(self, host: Clock, *, limit_seconds: float) -> None:
        self.host = host
        self.health = ClockHealth(limit_seconds=limit_seconds, measured=False)
        self._offset = timedelta(0)

    def now(self) -> datetime:
        return self.host.now() + self._offset

    async def sleep(self, seconds: float) -> None:
        await self.host.sleep(seconds)  # a duration: the offset does not change it

    async def measure(self, db: Database) -> float:
        """Measure the offset (database minus host, seconds) and keep it; raises when the
        database cannot be read (the last offset stays)."""
        if db.is_sqlite:
            offset = timedelta(0)  # the reference is this host's own clock
        else:
            async with db.read() as txn:
                before = self.host.now()
                reference: datetime = (await txn.execute(text(REFERENCE_SQL))).scalar_one()
                after = self.host.now()
            offset = reference - (before + (after - before) / 2)
        was = self.health.refusal()
        self._offset = offset
        self.health.offset_seconds = offset.total_seconds()
        self.health.measured = True
        telemetry.clock_measured(self.health.offset_seconds, self.health.refusal(), was)
        return self.health.offset_seconds

    async def try_measure(self, db: Database) -> bool:
        """`measure`, logging instead of raising; True when it measured."""
        try:
            await self.measure(db)
        except Exception:  # the database away: keep the last offset, try again soon
            log.warning("could not measure the clock against the database", exc_info=True)
            return False
        return True

    async def keep_measuring(self, db: Database, every: float, *, ok: bool) -> None:
        """Measure every `every` (real) seconds until cancelled; sooner after a failure
        (`ok`: whether the last measurement worked)."""
        while True:
            await asyncio.sleep(every if ok else min(every, RETRY_SECONDS))
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
