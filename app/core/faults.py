"""Crash points for the process-level fault harness (armed only through settings)."""

from __future__ import annotations

import os
import signal

from app.core.config import Settings


def maybe_crash(settings: Settings, point: str) -> None:
    """SIGKILL this process at `point` when JOBGATE_CRASH_AT names it (tests only)."""
    if settings.crash_at and settings.crash_at == point:
        os.kill(os.getpid(), signal.SIGKILL)
