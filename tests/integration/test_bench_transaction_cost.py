"""Smoke run of `bench/transaction_cost.py`: both settings run and the table comes out."""

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
    assert any(line.strip().startswith("step write, 3 statements") for line in lines), proc.stdout
    assert any(line.strip().startswith("read of one operation") for line in lines), proc.stdout
