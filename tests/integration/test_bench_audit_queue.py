"""Smoke run of `bench/audit_queue.py` on PostgreSQL: the three variants run and the
table comes out."""

from __future__ import annotations

import pytest

from tests.conftest import BACKEND_URL
from tests.support.bench import pg_server_url, run_bench


@pytest.mark.postgres_only
def test_audit_queue_bench_prints_three_variants() -> None:
    out = run_bench(
        "audit_queue.py", "--writers", "3", "--n", "5", "--rounds", "1",
        "--pg-url", pg_server_url(BACKEND_URL),
    )  # fmt: skip
    rows = [line.split()[0] for line in out.splitlines()[2:]]
    assert rows == ["queue", "row", "no"], out
