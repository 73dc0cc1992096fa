"""Smoke run of `bench/audit_overhead.py`: it runs both settings and its figures add up.

A tiny run (6 jobs, 3 at a time, one round each) with real processes (mock
provider, two gateways on SQLite). The throughput itself is not checked here,
only that every job succeeded, that "off" wrote no audit entry and "on" did.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_audit_overhead_bench_runs_both_settings() -> None:
    cmd = [sys.executable, str(ROOT / "bench" / "audit_overhead.py")]
    cmd += ["--jobs", "6", "--concurrency", "3", "--warmup", "1", "--rounds", "1", "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=100, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)

    on, off = (next(r for r in result["runs"] if r["audit"] is a) for a in (True, False))
    assert on["failed"] == off["failed"] == 0
    assert off["audit_entries_per_job"] == 0
    # intent, create exchange, transitions, 4 status exchanges, result: well over ten each
    assert on["audit_entries_per_job"] >= 10
    assert result["ratio_on_off"] > 0
    assert result["median_jobs_per_s"]["on"] == on["jobs_per_s"]
