"""Smoke run of `bench/end_to_end.py`: the benchmark still runs and its figures add up.

A tiny run (8 jobs, 4 at a time) of the two contenders that need nothing beyond
`make install` (the ceiling loop and jobgate on SQLite): DBOS is the `bench`
extra and is not imported here. It starts real processes (mock provider, gateway,
the ceiling worker), so it takes a few seconds; the figures themselves are not
checked, only that every job succeeded and the per-job counts are those of the
`slow` scenario with 3 polls.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.timing import FACTOR, budget

ROOT = Path(__file__).resolve().parents[2]


def test_end_to_end_bench_runs_and_counts_the_work() -> None:
    cmd = [sys.executable, str(ROOT / "bench" / "end_to_end.py")]
    cmd += ["--jobs", "8", "--concurrency", "4", "--warmup", "2", "--json"]
    cmd += ["--only", "ceiling,jobgate-sqlite"]
    env = {**os.environ, "JOBGATE_TEST_TIME_FACTOR": str(FACTOR)}  # its process starts, scaled
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=budget(100), cwd=ROOT, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)

    ceiling, jobgate = result["summary"]["ceiling"], result["summary"]["jobgate-sqlite"]
    for s in (ceiling, jobgate):
        assert s["not_succeeded"] == 0, s["examples_not_succeeded"]
        assert s["jobs_per_s"] > 0
        # one create, 3 "running" reads + 1 "succeeded" read, one result fetch
        assert s["provider_calls_per_job"] == 6
    assert jobgate["commits_per_job"] >= jobgate["write_commits_per_job"] > 0
    assert jobgate["history_rows_per_job"] > 0
    assert jobgate["cpu_ms_per_job"] > 0
    assert result["ratios"]["jobgate/ceiling sqlite"] > 0
    assert result["ratios"]["jobgate/dbos sqlite"] is None  # not run
