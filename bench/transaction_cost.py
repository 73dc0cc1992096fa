"""CPU of one transaction through `Database` and the repository, by kind.

The kinds are what the hot path does: an observation step's write (its guarded
UPDATE, then its exchange and observation rows with their audit entries) and the
read of one operation. Each round runs on a fresh database (SQLite in a temporary
directory, or a new PostgreSQL database when `--pg-url` is given); printed are the
medians over rounds of the CPU (user + system of this process, all threads) per
transaction.

    .venv/bin/python bench/transaction_cost.py [--n 3000] [--rounds 5]
        [--pg-url postgresql://postgres@127.0.0.1:5432/]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from end_to_end import fresh_database  # noqa: E402

from app import audit  # noqa: E402
from app.core.db import Database  # noqa: E402
from app.core.migrate import upgrade  # noqa: E402
from app.operations import repository as repo  # noqa: E402
from app.operations.repository import Fence  # noqa: E402

# An observation step's write: its schedule and remote fields, then its two history
# rows (the exchange and the observation) with their audit entries.
STEP_FIELDS = {
    "remote_state": "running",
    "remote_class": "running",
    "progress_completed": 1,
    "progress_total": 3,
    "next_poll_at": None,
    "poll_attempt": 2,
    "next_poll_reason": "provider says running",
    "lease_expires_at": None,
}


def history(now: datetime) -> list[dict[str, Any]]:
    exchange = {"operation": "status", "method": "GET", "status_code": 200, "ms": 7}
    return [
        repo.history_row(
            operation_id="none", at=now, kind=kind, actor="bench", cause="status", data=data
        )
        for kind, data in (("exchange", exchange), ("observation", {"state": "running"}))
    ]


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@contextmanager
def migrated_database(pg_url: str | None) -> Iterator[str]:
    """A fresh migrated database: SQLite in a temporary directory, or PostgreSQL."""
    with tempfile.TemporaryDirectory() as tmp:
        kind = "sqlite" if pg_url is None else "postgres"
        with fresh_database(kind, Path(tmp), pg_url or "", "txcost") as (url, _name):
            upgrade(url)
            yield url


async def one_round(url: str, n: int) -> dict[str, float]:
    """Microseconds of CPU per transaction, by kind."""
    db = Database(url, info=audit.session_info(True, None))
    now = datetime.now(UTC)
    fence = Fence("bench", 1)

    async def write() -> None:  # what an observation step writes
        async with db.write() as s:
            await repo.fenced_update(s, "none", fence=fence, at=now, fields=dict(STEP_FIELDS))
            await repo.append_history_rows(s, history(now))

    async def read() -> None:  # what a /wait or a fresh step reads
        async with db.read() as s:
            await repo.get(s, "none")

    kinds: dict[str, Callable[[], Awaitable[None]]] = {
        "step write, 3 statements": write,
        "read of one operation": read,
    }
    out = {}
    for name, fn in kinds.items():
        for _ in range(200):  # warm: pool, compiled cache
            await fn()
        c0 = cpu()
        for _ in range(n):
            await fn()
        out[name] = (cpu() - c0) / n * 1e6
    await db.dispose()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pg-url", default=None, help="also on PostgreSQL (server URL ending in /)")
    args = ap.parse_args()
    backends = {"SQLite": None} | ({"PostgreSQL": args.pg_url} if args.pg_url else {})
    runs: dict[str, list[dict[str, float]]] = {b: [] for b in backends}
    for _ in range(args.rounds):
        for backend, pg_url in backends.items():
            with migrated_database(pg_url) as url:
                runs[backend].append(asyncio.run(one_round(url, args.n)))
    print(f"transaction_cost: {args.n} transactions per kind, {args.rounds} rounds, medians")
    print(f"  {'transaction':26}" + "".join(f"{b:>12}" for b in backends))
    for kind in runs["SQLite"][0]:
        cells = "".join(f"{statistics.median(r[kind] for r in runs[b]):9.0f} us" for b in backends)
        print(f"  {kind:26}{cells}")


if __name__ == "__main__":
    main()
