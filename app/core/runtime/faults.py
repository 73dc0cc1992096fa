"""Crash points for the process-level fault harness (armed only through settings).

`JOBGATE_CRASH_AT=<point>` SIGKILLs the process at `point`; `JOBGATE_CRASH_AT=stop:<point>`
SIGSTOPs it there instead, the first time only, so a test can hold a frozen process
where it stands (inside a transaction, say) and SIGCONT it later.
"""

from __future__ import annotations

import os
import signal

from app.core.config import Settings

STOP = "stop:"
_stopped: set[str] = set()  # stop points already taken in this process


def maybe_crash(settings: Settings, point: str) -> None:
    """SIGKILL (or SIGSTOP, once) this process at `point` when JOBGATE_CRASH_AT names it
    (tests only)."""
    armed = settings.crash_at
    if not armed:
        return
    if armed == point:
        os.kill(os.getpid(), signal.SIGKILL)
    elif armed == STOP + point and point not in _stopped:
        _stopped.add(point)
        os.kill(os.getpid(), signal.SIGSTOP)
