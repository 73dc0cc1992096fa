"""CPU of one SQLite transaction through `Database` and the repository, by kind, with
and without running lock-free statements on the loop (app/core/sqlite_one_hop.py).

The kinds are what the hot path does: an observation step's write (its guarded
UPDATE, then its exchange and observation rows with their audit entries) and the
read of one operation. `thread`: every statement and COMMIT takes a trip to
aiosqlite's thread (one trip each, as `sqlite_one_hop` did before it ran them on the
loop); `loop`: today's engine, where only every 64th writing COMMIT of a connection
(with its checkpoint) and a BEGIN IMMEDIATE that finds the write lock taken take one.
The two settings
alternate round by round on fresh databases; printed are the medians over rounds of
the CPU (user + system of this process, both threads) per transaction, and the ratio.

    .venv/bin/python bench/transaction_cost.py [--n 3000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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


async def one_round(on_loop: bool, n: int) -> dict[str, float]:
    """Microseconds of CPU per transaction, by kind, for one setting."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/t.db"
        upgrade(url)
        db = Database(url, info=audit.session_info(True, None))

        @event.listens_for(db.engine.sync_engine, "connect")
        def _setting(dbapi_conn: Any, _rec: Any) -> None:
            dbapi_conn._connection._jobgate_inline = on_loop  # after sqlite_one_hop.install

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
    args = ap.parse_args()
    runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    for _ in range(args.rounds):
        for on_loop in (False, True):
            runs[on_loop].append(asyncio.run(one_round(on_loop, args.n)))
    print(f"transaction_cost: {args.n} transactions per kind, {args.rounds} rounds alternating")
    print(f"  {'transaction':22} {'thread':>10} {'loop':>10} {'loop/thread':>12}")
    for kind in runs[True][0]:
        t = statistics.median(r[kind] for r in runs[False])
        loop = statistics.median(r[kind] for r in runs[True])
        print(f"  {kind:22} {t:7.0f} us {loop:7.0f} us {loop / t:11.2f}x")


if __name__ == "__main__":
    main()
