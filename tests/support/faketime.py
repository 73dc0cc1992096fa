"""A child process whose wall clock is off by a fixed amount: libfaketime's LD_PRELOAD
(the PyPI package `libfaketime` ships the compiled library). Monotonic time is left
alone, so timeouts and sleeps inside the process stay real; so is CLOCK_BOOTTIME, which
SQLite's clock anchor counts from (`child_clock_offsets` shows both, as a test's premise)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import libfaketime


def skewed_env(offset: str) -> dict[str, str]:
    """The environment that runs a child `offset` off (libfaketime's syntax: "+1h")."""
    _, env = libfaketime.get_reload_information()
    return {**env, "FAKETIME": offset, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


def child_clock_offset(env: dict[str, str]) -> float:
    """Seconds a child run with `env` sees its wall clock ahead of this process's."""
    return child_clock_offsets(env)["wall"]


def child_clock_offsets(env: dict[str, str]) -> dict[str, float]:
    """Seconds each clock of a child run with `env` reads ahead of this process's:
    `wall`, `monotonic` and `boottime` (Linux)."""
    import json
    import os
    import time

    code = (
        "import json, time; print(json.dumps({'wall': time.time(), "
        "'monotonic': time.monotonic(), "
        "'boottime': time.clock_gettime(time.CLOCK_BOOTTIME)}))"
    )
    before = {
        "wall": time.time(),
        "monotonic": time.monotonic(),
        "boottime": time.clock_gettime(time.CLOCK_BOOTTIME),
    }
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(out.stdout)
    return {name: float(seen[name]) - before[name] for name in before}


def jumpable_env(timestamp_file: Path) -> dict[str, str]:
    """The environment that runs a child whose wall clock is whatever offset
    `timestamp_file` holds (libfaketime's syntax, "+0", "+1h", "-1h"), read again at every
    call, so the test can step the clock of a process that is running."""
    _, env = libfaketime.get_reload_information()
    if not timestamp_file.exists():
        timestamp_file.write_text("+0\n")
    return {
        **env,
        "FAKETIME_TIMESTAMP_FILE": str(timestamp_file),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }


def step_clock(timestamp_file: Path, offset: str) -> None:
    """Step the wall clock of every child run with `jumpable_env(timestamp_file)`."""
    tmp = timestamp_file.with_suffix(".tmp")
    tmp.write_text(f"{offset}\n")
    tmp.replace(timestamp_file)  # whole, never half-written
