"""Smoke run of `bench/audit_queue.py` on PostgreSQL: the three variants run and the
table comes out."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import BACKEND_URL

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.postgres_only
def test_audit_queue_bench_prints_three_variants() -> None:
    server = make_url(BACKEND_URL).set(database="").render_as_string(hide_password=False)
    cmd = [sys.executable, str(ROOT / "bench" / "audit_queue.py"), "--writers", "3"]
    cmd += ["--n", "5", "--rounds", "1", "--pg-url", server.rstrip("/") + "/"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line.split()[0] for line in proc.stdout.splitlines()[2:]]
    assert rows == ["queue", "row", "no"], proc.stdout
