"""Time as a dependency: production uses the wall clock, tests move a fake one."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...

    async def sleep(self, seconds: float) -> None:
        """Return once `seconds` have passed on this clock."""
        ...


class SystemClock:
    """The real UTC wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class FakeClock:
    """A clock that only moves when a test says so; its sleepers wake when it does."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._moved: set[asyncio.Event] = set()

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> datetime:
        self._now += timedelta(seconds=seconds)
        for moved in self._moved:
            moved.set()
        return self._now

    async def sleep(self, seconds: float) -> None:
        """Return once the test has advanced the clock by `seconds` (never on real time)."""
        until = self._now + timedelta(seconds=seconds)
        while self._now < until:
            moved = asyncio.Event()
            self._moved.add(moved)
            try:
                await moved.wait()
            finally:
                self._moved.discard(moved)
