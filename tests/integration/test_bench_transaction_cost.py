"""Smoke run of `bench/transaction_cost.py`: every kind runs every way on a real row."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_transaction_cost_bench_prints_both_kinds() -> None:
    cmd = [sys.executable, str(ROOT / "bench" / "transaction_cost.py"), "--n", "50"]
    proc = subprocess.run(cmd + ["--rounds", "1"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    for kind in ("step write", "read of one operation"):
        for way in ("jobgate", "core", "driver"):
            assert any(line.split()[-4:-3] == [way] and kind in line for line in lines), proc.stdout
