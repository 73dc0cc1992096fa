"""A host clock off the real one by a fixed amount: a process whose machine's clock is
wrong, in-process (tests/integration/test_clock_skew.py; a real process runs under
libfaketime instead, tests/integration/test_clock_skew_process.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.core.runtime.clock import SystemClock


class ShiftedClock(SystemClock):
    """The system clock plus `shift` seconds (sleeping is unchanged: durations are real)."""

    def __init__(self, shift: float) -> None:
        self.shift = timedelta(seconds=shift)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.shift
