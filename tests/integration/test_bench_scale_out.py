"""Smoke run of `bench/scale_out.py` on PostgreSQL: two layouts, a handful of jobs, and
the table comes out (every job must succeed, or the bench itself fails)."""

from __future__ import annotations

import pytest

from tests.conftest import BACKEND_URL
from tests.support.bench import pg_server_url, run_bench


@pytest.mark.postgres_only
def test_scale_out_bench_runs_two_layouts() -> None:
    out = run_bench(
        "scale_out.py", "--jobs", "8", "--concurrency", "4", "--layouts", "1x1,2x2",
        "--pg-url", pg_server_url(BACKEND_URL),
    )  # fmt: skip
    rows = [line.split()[0] for line in out.splitlines()[2:]]
    assert rows == ["1x1", "2x2"], out
