"""`jobgate ARGS` run as a child process, as an operator runs it: none of this process's
`JOBGATE_*` settings leak in, only the ones a test passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.timing import budget


def jobgate_cli(
    *args: str, cwd: Path | None = None, timeout: float | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """`python -m app.cli ARGS` with `env` as its only `JOBGATE_*` settings; `timeout`
    defaults to a minute, scaled for this machine (tests/support/timing.py)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=budget(60) if timeout is None else timeout,
    )
