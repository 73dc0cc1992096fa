"""Running a script of bench/ as its smoke tests do: a subprocess from the repository's
root, failing on a non-zero exit with its last words."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[2]


def pg_server_url(backend_url: str) -> str:
    """The server part of a PostgreSQL URL, ending in '/' (benches make their databases)."""
    return (
        make_url(backend_url).set(database="").render_as_string(hide_password=False).rstrip("/")
        + "/"
    )


def run_bench(script: str, *args: str, timeout: float = 180) -> str:
    """Its standard output; the test fails with its standard error if it failed."""
    cmd = [sys.executable, str(ROOT / "bench" / script), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout
