"""`make test` on a loaded machine: when start-up timeouts pile up, the run ends saying
the load average, whether the machine is loaded and how to rerun only the failures; and
every budget grows with the load (tests/support/load_report.py, tests/support/timing.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import load_report, timing

ROOT = Path(__file__).resolve().parents[2]

FAILING = """\
import pytest

@pytest.mark.parametrize("n", range({count}))
def test_a_process_that_never_starts(n):
    raise TimeoutError(f"http://127.0.0.1:1 not healthy; log: (empty) {{n}}")

def test_a_plain_failure():
    assert 1 == 2
"""
CONFTEST = """\
from tests.support import load_report

def pytest_configure(config):
    load_report.register(config)
"""


def run_suite(tmp_path: Path, count: int) -> str:
    (tmp_path / "test_x.py").write_text(FAILING.format(count=count))
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timing.budget(60),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stdout


def test_piled_up_start_up_timeouts_end_the_run_with_the_load_and_the_rerun(
    tmp_path: Path,
) -> None:
    out = run_suite(tmp_path, load_report.PILE_UP)
    tail = out[out.index("the machine may be loaded") :]
    assert f"{load_report.PILE_UP} tests failed on start-up timeouts" in tail
    assert "Load average" in tail and f"on {os.cpu_count()} cores" in tail
    assert "make test PYTEST_ARGS=--lf" in tail


def test_a_few_timeouts_say_nothing_more(tmp_path: Path) -> None:
    out = run_suite(tmp_path, load_report.PILE_UP - 1)
    assert "the machine may be loaded" not in out and "--lf" not in out


def test_the_summary_says_loaded_only_above_the_cores() -> None:
    loaded = " ".join(load_report.summary(5, (14.2, 9.8, 6.1), 2, 6.0))
    assert "Load average 14.2 / 9.8 / 6.1 (1, 5, 15 min) on 2 cores" in loaded
    assert "the machine is loaded" in loaded and "scaled by 6.0" in loaded
    quiet = " ".join(load_report.summary(5, (0.5, 0.4, 0.3), 2, 1.0))
    assert "not loaded now" in quiet and "--lf" in quiet


def test_budgets_scale_with_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing, "FACTOR", 1.0)
    monkeypatch.setattr(timing, "cores", lambda: 2)
    monkeypatch.setattr(timing, "load_average", lambda: (1.0, 1.0, 1.0))
    assert timing.budget(20) == 20  # under the cores: as given
    monkeypatch.setattr(timing, "load_average", lambda: (8.0, 6.0, 4.0))
    assert timing.budget(20) == 80  # four times the cores: four times the time
    monkeypatch.setattr(timing, "load_average", lambda: (40.0, 30.0, 20.0))
    assert timing.budget(20) == 20 * timing.MAX_LOAD_FACTOR  # bounded: a test still ends
    monkeypatch.setattr(timing, "FACTOR", 10.0)
    assert timing.budget(20) == 200  # the given factor when it is larger
