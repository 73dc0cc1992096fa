"""Smoke run of `bench/slow_create.py` at a small scale: with a bound below the provider's
create delay every POST answers within it, the create still in flight, and each
operation then has exactly one job at the mock."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.timing import budget

ROOT = Path(__file__).resolve().parents[2]


def test_slow_create_bench_answers_within_the_bound() -> None:
    cmd = [sys.executable, str(ROOT / "bench" / "slow_create.py"), "--json", "--n", "4"]
    cmd += ["--concurrency", "4", "--create-ms", "1500", "--bounds", "0.3"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [bounded] = json.loads(proc.stdout)["rows"]
    assert bounded["in_flight_answers"] == 4 and bounded["max_s"] < 0.3 + budget(1.0)
    assert bounded["jobs_per_operation"] == [1]
