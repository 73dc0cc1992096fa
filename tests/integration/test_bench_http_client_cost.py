"""Smoke run of `bench/http_client_cost.py`: both libraries and the gateway's own client
run at each level and the table comes out."""

from __future__ import annotations

from tests.support.bench import run_bench


def test_http_client_cost_bench_measures_both_libraries_and_the_gateways_client() -> None:
    out = run_bench("http_client_cost.py", "--n", "20", "--concurrency", "1,4")
    rows = [line.split() for line in out.splitlines()[2:]]
    clients = [(r[0], r[1]) for r in rows if r[1] in ("httpx", "httpx2", "jobgate")]
    assert clients == [
        ("1", "httpx"), ("1", "httpx2"), ("1", "jobgate"),
        ("4", "httpx"), ("4", "httpx2"), ("4", "jobgate"),
    ], out  # fmt: skip
    assert sum(r[0] == "ratio" for r in rows) == 4, out
