"""`make screenshots` without headless Chromium says so, starts nothing and exits 0
(tests/support/screenshots.py; with Chromium, test_views_screenshots.py shoots pages)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.timing import budget

ROOT = Path(__file__).resolve().parents[2]


def test_without_chromium_it_says_so_and_takes_nothing(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python3").symlink_to(sys.executable)  # nothing else on PATH: no chromium
    env = {**os.environ, "PATH": str(bare), "PYTHONPATH": str(ROOT)}
    out = tmp_path / "shots"
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.screenshots", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=budget(60),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "headless Chromium is not installed" in done.stdout
    assert "no screenshots taken" in done.stdout and not out.exists()
