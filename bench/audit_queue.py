"""PostgreSQL: what appending to the audit chain costs the server when writers contend.

Every write transaction appends its audit entries after the chain's one head, so
appenders take turns until each commits (app/audit/trail.py). N concurrent writers,
each a loop of `Database.transaction()` transactions of one history row and its audit entry
(a step's shape), in three variants, alternating round by round on fresh databases:

- `queue`: as shipped: a transaction-level advisory lock first, then the append;
- `row lock`: the append's `FOR UPDATE` on the head row alone (the advisory lock
  replaced by a `SELECT 1`, so both send the same number of statements);
- `no audit`: the trail switched off (`JOBGATE_AUDIT_ENABLED=false`), for scale.

Printed are medians over rounds of the PostgreSQL server's CPU per transaction (all
its processes) and the wall time per transaction.

    .venv/bin/python bench/audit_queue.py [--writers 16] [--n 150] [--rounds 3]
        [--pg-url postgresql://postgres@127.0.0.1:5432/]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from e2e_probe import postgres_cpu_seconds
from sqlalchemy import literal, select
from transaction_cost import migrated_database

from app import audit
from app.audit import trail
from app.core.db.database import Database
from app.core.runtime import event_loop
from app.operations import repository as repo

SHIPPED_QUEUE = trail._PG_QUEUE


async def one_round(url: str, variant: str, writers: int, n: int) -> tuple[float, float]:
    """(server CPU us, wall us) per transaction."""
    trail._PG_QUEUE = SHIPPED_QUEUE if variant == "queue" else select(literal(1))
    db = Database(
        url,
        info=audit.session_info(variant != "no audit", None),
        before_commit=[audit.append_pending],
    )
    now = datetime.now(UTC)

    async def writer(i: int, count: int) -> None:
        for _ in range(count):
            async with db.transaction() as txn:
                await repo.append_history(
                    txn, operation_id=f"op_{i}", at=now, kind="note", actor="bench", cause="x"
                )

    await asyncio.gather(*(writer(i, 20) for i in range(writers)))  # warm: the pool
    s0, w0 = postgres_cpu_seconds(), time.perf_counter()
    await asyncio.gather(*(writer(i, n) for i in range(writers)))
    server, wall = postgres_cpu_seconds() - s0, time.perf_counter() - w0
    await db.dispose()
    trail._PG_QUEUE = SHIPPED_QUEUE
    return server / (writers * n) * 1e6, wall / (writers * n) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--n", type=int, default=150, help="transactions per writer")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/")
    args = ap.parse_args()
    variants = ("queue", "row lock", "no audit")
    runs: dict[str, list[tuple[float, float]]] = {v: [] for v in variants}
    for _ in range(args.rounds):
        for variant in variants:
            with migrated_database(args.pg_url) as url:
                runs[variant].append(event_loop.run(one_round(url, variant, args.writers, args.n)))
    print(
        f"audit_queue: {args.writers} writers x {args.n} transactions, {args.rounds} rounds"
        ", medians"
    )
    print(f"  {'variant':10} {'server cpu/txn':>15} {'wall/txn':>10}")
    for variant, rows in runs.items():
        server = statistics.median(r[0] for r in rows)
        wall = statistics.median(r[1] for r in rows)
        print(f"  {variant:10} {server:12.0f} us {wall:7.0f} us")


if __name__ == "__main__":
    main()
