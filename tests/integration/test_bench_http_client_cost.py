"""Smoke run of `bench/http_client_cost.py`: both libraries run at each level and the
table comes out."""

from __future__ import annotations

from tests.support.bench import run_bench


def test_http_client_cost_bench_measures_both_libraries() -> None:
    out = run_bench("http_client_cost.py", "--n", "20", "--concurrency", "1,4")
    rows = [line.split() for line in out.splitlines()[2:]]
    libraries = [(r[0], r[1]) for r in rows if r[1] in ("httpx", "httpx2")]
    assert libraries == [("1", "httpx"), ("1", "httpx2"), ("4", "httpx"), ("4", "httpx2")], out
    assert sum(r[0] == "ratio" for r in rows) == 2, out
