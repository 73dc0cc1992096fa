"""How long `POST /v1/operations` holds an agent when the provider's create is slow.

A real gateway and mock provider (processes on loopback). Every create is held by the
mock for `--create-ms` (scenario `create_delay_ms`: the job is made, its answer is
late). For each answer bound (`JOBGATE_CREATE_ANSWER_SECONDS`, `--bounds`; a bound
above the create delay is the gateway that waits for the provider) it prints the POST
latency p50 / p99 / max, how many answers said the create was still in flight
(`create_pending`, `done: false`), and, once every operation finished, the jobs per
operation counted at the mock (must be 1).

    .venv/bin/python bench/slow_create.py [--n 40] [--concurrency 8] [--create-ms 5000]
        [--bounds 2,60] [--database-url ...] [--json]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.db.migrate import upgrade  # noqa: E402
from tests.support.processes import gateway_env, gateway_process, mock_process  # noqa: E402


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _one_bound(
    db_url: str, mock_url: str, tmp: Path, bound: float, args: argparse.Namespace
) -> dict[str, Any]:
    scenario = {"name": "fast", "create_delay_ms": args.create_ms}
    body = {"provider": "mock", "kind": "report", "input": {"scenario": scenario}}
    env = gateway_env(
        db_url, mock_url, tmp / f"data-{bound}", create_answer_seconds=bound, lease_seconds=30
    )
    with (
        gateway_process(env, tmp / f"gateway-{bound}.log") as (_, url),
        httpx2.Client(base_url=url, timeout=args.create_ms / 1000 + 60) as client,
    ):

        def post(_: int) -> tuple[float, dict[str, Any]]:
            started = time.perf_counter()
            r = client.post(
                "/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
            )
            took = time.perf_counter() - started
            assert r.status_code == 202, r.text
            return took, r.json()

        with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
            answers = list(pool.map(post, range(args.n)))
        ids = [b["operation_id"] for _, b in answers]
        for op_id in ids:  # every create ends: one job each, or the bench fails
            w = client.get(f"/v1/operations/{op_id}/wait", params={"timeout": 120})
            assert w.status_code == 200 and w.json()["state"] == "succeeded", w.text
    jobs = [
        len(
            httpx2.get(f"{mock_url}/_mock/stats", params={"client_reference": op_id}, timeout=30)
            .json()["jobs_by_reference"]
            .get(op_id, [])
        )
        for op_id in ids
    ]
    latencies = [took for took, _ in answers]
    return {
        "bound_s": bound,
        "n": args.n,
        "p50_s": round(statistics.median(latencies), 3),
        "p99_s": round(_percentile(latencies, 0.99), 3),
        "max_s": round(max(latencies), 3),
        "in_flight_answers": sum(1 for _, b in answers if b["state"] == "create_pending"),
        "jobs_per_operation": sorted(set(jobs)),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--create-ms", type=int, default=5000)
    ap.add_argument("--bounds", default="2,60", help="answer bounds in seconds, comma-separated")
    ap.add_argument("--database-url", default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="jobgate-bench-"))
    db_url = args.database_url or f"sqlite:///{tmp / 'bench.db'}"
    upgrade(db_url)
    with mock_process(tmp) as mock_url:
        rows = [_one_bound(db_url, mock_url, tmp, float(b), args) for b in args.bounds.split(",")]
    if args.json:
        print(json.dumps({"create_ms": args.create_ms, "rows": rows}))  # noqa: T201
        return
    print(  # noqa: T201
        f"slow_create: provider create {args.create_ms} ms, n={args.n}, "
        f"concurrency={args.concurrency}"
    )
    for r in rows:
        print(  # noqa: T201
            f"  bound {r['bound_s']:>6g} s: POST p50 {r['p50_s']:.3f} s  p99 {r['p99_s']:.3f} s  "
            f"max {r['max_s']:.3f} s  in flight {r['in_flight_answers']}/{r['n']}  "
            f"jobs per operation {r['jobs_per_operation']}"
        )


if __name__ == "__main__":
    main()
