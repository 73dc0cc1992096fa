"""Smoke run of `bench/observer_scale.py`: the real observer loop does polls and the
report comes out with no task error (a tiny run: 200 and 400 in flight, 2 s each)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_observer_scale_bench_polls_and_reports() -> None:
    cmd = [sys.executable, str(ROOT / "bench" / "observer_scale.py"), "--backends", "sqlite"]
    cmd += ["--sizes", "200,400", "--seconds", "2", "--due-per-second", "50"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    # An observer that raised in every step would still print a table: this would not.
    assert "Traceback" not in out and "exception was never retrieved" not in out, out[-3000:]
    assert "ratio 400/200 of median ms per due op" in out, out[-3000:]
