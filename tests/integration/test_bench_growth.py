"""Smoke run of `bench/growth.py` on a small fill: it fills, reads, prunes about half
and verifies the pruned audit chain (slow: the real figures are in docs/performance.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_growth_bench_fills_reads_prunes_and_verifies() -> None:
    cmd = [sys.executable, str(ROOT / "bench" / "growth.py"), "--rows", "2000", "--samples", "5"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [figures] = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert figures["bytes_per_operation"] > 0 and figures["verify_ok"]
    assert 900 <= figures["pruned"] <= 1000  # the half older than 30 days, less the kept
    assert set(figures["reads_ms"]) == {
        "list newest 50", "list in flight 50", "list succeeded 50", "GET one"
    }  # fmt: skip
