"""What the audit trail costs: create+poll throughput with it on and off, in one run.

    .venv/bin/python bench/audit_overhead.py [--jobs 300] [--concurrency 32] [--rounds 3]
        [--db sqlite|postgres] [--pg-url postgresql://postgres@127.0.0.1:5432/] [--json]

Each round runs both settings back to back, in alternating order (on/off, then
off/on, ...), each on a fresh database behind a fresh `jobgate serve` process
with its in-process observer (`JOBGATE_AUDIT=off` for "off"); one mock provider
serves the whole run. The work is `bench/end_to_end.py`'s: agents POST
`/v1/operations` (scenario `slow`, 3 "running" polls 10 ms apart) and call
`/wait` until done, C at a time, after an untimed warm-up of C jobs. Throughput
is timed jobs / wall time; the report gives the medians over rounds, the ratio
on/off and the slowdown (target: at most 15%).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from e2e_workers import WARMUP_OFFSET
from end_to_end import (
    Gateway,
    agents,
    fresh_database,
    loadavg,
    med,
    mock_profile_first_delay,
    mock_provider,
)
from sqlalchemy import create_engine, text

from app.core.db.database import sync_url
from app.core.db.migrate import upgrade

TARGET_SLOWDOWN = 0.15  # the trail may cost at most this share of throughput


def audit_entries(db_url: str) -> int:
    engine = create_engine(sync_url(db_url))
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM audit_log")).scalar_one())
    finally:
        engine.dispose()


def one_run(
    audit: bool, args: argparse.Namespace, mock_url: str, tmp: Path, scale: float, hint: float
) -> dict[str, Any]:
    """One gateway on a fresh database: warm-up, then the timed jobs."""
    with fresh_database(args.db, tmp, args.pg_url, "jobgate_audit") as (url, _):
        upgrade(url)
        extra = [] if audit else ["JOBGATE_AUDIT=off"]
        gw = Gateway(url, mock_url, tmp, scale, extra).start()
        try:
            asyncio.run(agents(gw.url, args.warmup, args.concurrency, WARMUP_OFFSET, hint))
            out = asyncio.run(agents(gw.url, args.jobs, args.concurrency, 0, hint))
        finally:
            gw.proc.terminate()
        failed = sum(o != "succeeded" for o in out["outcomes"])
        entries = audit_entries(url)
    return {
        "audit": audit,
        "jobs_per_s": args.jobs / out["wall"],
        "failed": failed,
        "audit_entries_per_job": entries / (args.jobs + args.warmup),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    first, _, _ = mock_profile_first_delay()
    scale = args.poll_ms / 1000 / first
    runs: list[dict[str, Any]] = []
    load_before = loadavg()
    with tempfile.TemporaryDirectory(prefix="jobgate-audit-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        with mock_provider(tmp) as (mock_url, _):
            for rnd in range(args.rounds):
                order = (True, False) if rnd % 2 == 0 else (False, True)
                for audit in order:
                    run_dir = tmp / f"r{rnd}-{'on' if audit else 'off'}"
                    run_dir.mkdir()
                    r = one_run(audit, args, mock_url, run_dir, scale, first)
                    r["round"] = rnd + 1
                    runs.append(r)
                    if not args.json:
                        print(
                            f"  round {rnd + 1}/{args.rounds} audit {'on ' if audit else 'off'}: "
                            f"{r['jobs_per_s']:.1f} jobs/s",
                            file=sys.stderr,
                            flush=True,
                        )
    on = med([r["jobs_per_s"] for r in runs if r["audit"]])
    off = med([r["jobs_per_s"] for r in runs if not r["audit"]])
    return {
        "params": {
            "jobs": args.jobs,
            "concurrency": args.concurrency,
            "rounds": args.rounds,
            "warmup": args.warmup,
            "db": args.db,
            "poll_ms": args.poll_ms,
        },
        "load_before": load_before,
        "load_after": loadavg(),
        "runs": runs,
        "median_jobs_per_s": {"on": on, "off": off},
        "ratio_on_off": on / off,
        "slowdown": 1 - on / off,
        "within_target": 1 - on / off <= TARGET_SLOWDOWN,
    }


def print_report(result: dict[str, Any]) -> None:
    p = result["params"]
    print(
        f"audit_overhead: {p['jobs']} jobs, {p['concurrency']} at a time, {p['db']}, "
        f"{p['rounds']} round(s) each, alternating; warm-up {p['warmup']}"
    )
    print(f"load average: before {result['load_before']}, after {result['load_after']}")
    for setting in ("on", "off"):
        rounds = [r for r in result["runs"] if r["audit"] == (setting == "on")]
        figures = ", ".join(f"{r['jobs_per_s']:.1f}" for r in rounds)
        entries = med([r["audit_entries_per_job"] for r in rounds])
        print(
            f"trail {setting:<3}: median {result['median_jobs_per_s'][setting]:.1f} jobs/s "
            f"(rounds: {figures}); audit entries/job {entries:.1f}; "
            f"failed {sum(r['failed'] for r in rounds)}"
        )
    verdict = "within" if result["within_target"] else "OVER"
    print(
        f"ratio on/off {result['ratio_on_off']:.3f}: {result['slowdown'] * 100:+.1f}% slower "
        f"({verdict} the {TARGET_SLOWDOWN * 100:.0f}% target)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3, help="rounds; each runs on and off")
    ap.add_argument("--warmup", type=int, default=None, help="untimed jobs first (default: C)")
    ap.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    ap.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/")
    ap.add_argument("--poll-ms", type=float, default=10.0, help="spacing of the status polls")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead")
    args = ap.parse_args()
    args.warmup = args.concurrency if args.warmup is None else args.warmup
    t0 = time.perf_counter()
    result = run(args)
    result["seconds"] = time.perf_counter() - t0
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_report(result)


if __name__ == "__main__":
    main()
