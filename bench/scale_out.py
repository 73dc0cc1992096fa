"""Scale-out on PostgreSQL: the same work with 1 or 2 observer processes and 1 or 2 gateways.

Every layout gets a fresh mock and a fresh database, then the work of
`bench/end_to_end.py` (N jobs, C at a time, scenario `slow` with 3 "running" polls
10 ms apart; agents POST, then `/wait` until done). Gateways run `jobgate serve
--no-observer`, so the observer processes (`jobgate observe`) do every poll; agents
are split evenly over the gateways. Printed: jobs/s per layout, the scaling
factor against one gateway with one observer, and the CPU of each kind of process
per job. All processes share this machine's cores, which bounds any factor.

    .venv/bin/python bench/scale_out.py [--jobs 400] [--concurrency 32] [--rounds 1]
        [--layouts 1x1,1x2,2x2] [--pg-url postgresql://postgres@127.0.0.1:5432/]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from e2e_probe import cpu_seconds
from e2e_workers import WARMUP_OFFSET
from end_to_end import agents, fresh_database, loadavg, mock_profile_first_delay, mock_provider

from app.core.db.migrate import upgrade
from tests.support.processes import Process, gateway_process

SCALE = 0.005  # the time scale of bench/end_to_end.py: polls 10 ms apart


def layout(spec: str) -> tuple[int, int]:
    gateways, observers = (int(x) for x in spec.split("x"))
    return gateways, observers


async def spread(urls: list[str], n: int, conc: int, offset: int, hint: float) -> float:
    """n jobs, conc at a time, split evenly over the gateways: `end_to_end.agents`, one
    group per gateway. Returns the wall time; a job that did not succeed fails the run."""
    k = len(urls)
    t0 = time.perf_counter()
    groups = await asyncio.gather(
        *(
            agents(u, n // k + (g < n % k), max(1, conc // k), offset + g * n, hint)
            for g, u in enumerate(urls)
        )
    )
    wall = time.perf_counter() - t0
    bad = [o for r in groups for o in r["outcomes"] if o != "succeeded"]
    if bad:
        raise RuntimeError(f"{len(bad)} jobs did not succeed, e.g. {bad[0]}")
    return wall


def run_layout(spec: str, args: argparse.Namespace, tmp: Path, hint: float) -> dict[str, Any]:
    n_gw, n_obs = layout(spec)
    with (
        mock_provider(tmp) as (mock_url, _mock_pid),
        fresh_database("postgres", tmp, args.pg_url, "jobgate_scale") as (url, _db),
        contextlib.ExitStack() as stack,
    ):
        upgrade(url)
        env = {
            "JOBGATE_DATABASE_URL": url,
            "JOBGATE_DATA_DIR": str(tmp / "data"),
            "JOBGATE_MOCK_PROVIDER_URL": mock_url,
            "JOBGATE_AUTH": "dev",
            "JOBGATE_TIME_SCALE": repr(SCALE),
        }
        procs: list[Process] = []
        urls = []
        for g in range(n_gw):
            gw_env = {**env, "JOBGATE_OBSERVER_ID": f"gw{g}"}
            gw, gw_url = stack.enter_context(
                gateway_process(gw_env, tmp / f"{spec}-gw{g}.log", observer=False)
            )
            procs.append(gw)
            urls.append(gw_url)
        for o in range(n_obs):
            obs_env = {**env, "JOBGATE_OBSERVER_ID": f"obs{o}"}
            obs = Process(["observe"], obs_env, tmp / f"{spec}-o{o}.log").start()
            stack.callback(obs.kill)
            procs.append(obs)
        asyncio.run(spread(urls, args.concurrency, args.concurrency, WARMUP_OFFSET, hint))
        pids = {p: p.proc.pid for p in procs if p.proc is not None}
        cpu0 = {p: cpu_seconds(pid) for p, pid in pids.items()}
        wall = asyncio.run(spread(urls, args.jobs, args.concurrency, 0, hint))
        cpu = {p: cpu_seconds(pid) - cpu0[p] for p, pid in pids.items()}
    gw_cpu = sum(v for p, v in cpu.items() if p.args[0] == "serve")
    obs_cpu = sum(v for p, v in cpu.items() if p.args[0] == "observe")
    return {
        "jobs_per_s": args.jobs / wall,
        "gateway_cpu_ms_per_job": 1000 * gw_cpu / args.jobs,
        "observer_cpu_ms_per_job": 1000 * obs_cpu / args.jobs,
        "busiest_process_cpu_share": max(cpu.values()) / wall,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--layouts", default="1x1,1x2,2x2", help="GATEWAYSxOBSERVERS, comma-separated")
    ap.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/")
    args = ap.parse_args()
    first, _, _ = mock_profile_first_delay()
    specs = args.layouts.split(",")
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in specs}
    before = loadavg()
    with tempfile.TemporaryDirectory() as tmp_name:
        for r in range(args.rounds):
            for s in specs:  # layouts alternate within a round
                print(f"  round {r + 1}/{args.rounds}: {s} ...", file=sys.stderr)
                runs[s].append(run_layout(s, args, Path(tmp_name), first))
    print(
        f"scale_out on PostgreSQL: {args.jobs} jobs, {args.concurrency} at a time, scenario slow "
        f"(polls: 3, 10 ms apart), {args.rounds} round(s), {os.cpu_count()} cores; "
        f"load average before {before}, after {loadavg()}"
    )
    base = statistics.median(x["jobs_per_s"] for x in runs[specs[0]])
    print(
        f"{'gateways x observers':22} {'jobs/s':>8} {'vs ' + specs[0]:>8} "
        f"{'gw cpu ms/job':>14} {'obs cpu ms/job':>15} {'busiest proc':>13}"
    )
    for s in specs:
        m = {k: statistics.median(x[k] for x in runs[s]) for k in runs[s][0]}
        print(
            f"{s:22} {m['jobs_per_s']:8.1f} {m['jobs_per_s'] / base:7.2f}x "
            f"{m['gateway_cpu_ms_per_job']:14.1f} {m['observer_cpu_ms_per_job']:15.1f} "
            f"{100 * m['busiest_process_cpu_share']:12.0f}%"
        )


if __name__ == "__main__":
    main()
