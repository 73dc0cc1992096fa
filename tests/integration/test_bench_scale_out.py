"""Smoke run of `bench/scale_out.py` on PostgreSQL: two layouts, a handful of jobs, and
the table comes out (every job must succeed, or the bench itself fails)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import BACKEND_URL

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.postgres_only
def test_scale_out_bench_runs_two_layouts() -> None:
    server = make_url(BACKEND_URL).set(database="").render_as_string(hide_password=False)
    cmd = [sys.executable, str(ROOT / "bench" / "scale_out.py"), "--jobs", "8"]
    cmd += ["--concurrency", "4", "--layouts", "1x1,2x2", "--pg-url", server.rstrip("/") + "/"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line.split()[0] for line in proc.stdout.splitlines()[2:]]
    assert rows == ["1x1", "2x2"], proc.stdout
