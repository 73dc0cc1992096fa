"""A child process whose wall clock is off by a fixed amount: libfaketime's LD_PRELOAD
(the PyPI package `libfaketime` ships the compiled library). Monotonic time is left
alone, so timeouts and sleeps inside the process stay real."""

from __future__ import annotations

import subprocess
import sys

import libfaketime


def skewed_env(offset: str) -> dict[str, str]:
    """The environment that runs a child `offset` off (libfaketime's syntax: "+1h")."""
    _, env = libfaketime.get_reload_information()
    return {**env, "FAKETIME": offset, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


def child_clock_offset(env: dict[str, str]) -> float:
    """Seconds a child run with `env` sees its wall clock ahead of this process's."""
    import os
    import time

    code = "import datetime; print(datetime.datetime.now(datetime.UTC).timestamp())"
    before = time.time()
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout) - before
