"""CPU of one transaction on a real row, by kind and by way of running it.

The kinds are what the hot path does: an observation step's write (a fenced UPDATE
of a leased operation, then its exchange and observation history rows) and the read
of one operation. Each runs three ways, in one round, on the same database:
- `jobgate`: `Database` and the repository (app/core/db/txn.py and sqlexec.py); the
  read returns an `Operation`;
- `core`: SQLAlchemy Core's public `Connection` (SQLite: the sync engine) or
  `AsyncConnection` (PostgreSQL: asyncpg), no ORM session, the same statements; the
  read builds an `Operation` from the row;
- `driver`: the same SQL on sqlite3 / asyncpg directly, raw tuples back (no value
  conversion: the floor).

The row exists (seeded with 500 others, leased by the fence the write checks), and
the write's UPDATE is checked to hit it. Each round runs on a fresh database (SQLite
in a temporary directory, or a new PostgreSQL database when `--pg-url` is given);
printed are the medians over rounds of the CPU (user + system of this process, all
threads) per transaction. The audit trail is off (`core` and `driver` do not write it).

    .venv/bin/python bench/transaction_cost.py [--n 2000] [--rounds 3]
        [--pg-url postgresql://postgres@127.0.0.1:5432/]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sqlite3
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import bindparam, create_engine, insert, select, update
from sqlalchemy.ext.asyncio import create_async_engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from end_to_end import fresh_database  # noqa: E402

from app import audit  # noqa: E402
from app.core.db.database import Database, async_url, sync_url  # noqa: E402
from app.core.db.migrate import upgrade  # noqa: E402
from app.operations import repository as repo  # noqa: E402
from app.operations.domain.operation import Operation  # noqa: E402
from app.operations.domain.states import State  # noqa: E402
from app.operations.repository import Fence  # noqa: E402
from app.operations.repository.tables import HIST, OPS  # noqa: E402

OP_ID = "op_bench_0250"  # one of the seeded rows, leased by FENCE
FENCE = Fence("bench", 1)
SEEDED = 501

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
            operation_id=OP_ID, at=now, kind=kind, actor="bench", cause="status", data=data
        )
        for kind, data in (("exchange", exchange), ("observation", {"state": "running"}))
    ]


def seed_rows(now: datetime) -> list[dict[str, Any]]:
    """Operations as the gateway writes them; OP_ID among them, leased by FENCE."""
    rows = []
    for i in range(SEEDED):
        op_id = f"op_bench_{i:04d}"
        rows.append(
            {
                "id": op_id,
                "principal": "bench",
                "idempotency_key": f"key-{i}",
                "fingerprint": "sha256:x",
                "provider": "mock",
                "kind": "report",
                "input": {"scenario": {"name": "slow", "polls": 3}, "text": "é"},
                "provider_token": f"jg_{op_id}",
                "trace_id": f"tr_{i}",
                "single_create": "token",
                "state": State.OBSERVING,
                "version": 3,
                "remote_job_id": f"job_{i}",
                "create_deadline_at": now + timedelta(minutes=2),
                "result_deadline_at": now + timedelta(hours=1),
                "next_poll_at": now,
                "lease_owner": FENCE.owner,
                "lease_token": FENCE.token,
                "lease_expires_at": now + timedelta(seconds=30),
                "labels": {"team": "a"},
                "created_at": now,
                "updated_at": now,
            }
        )
    return rows


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


_UPDATE = (
    update(OPS)
    .where(
        OPS.c.id == bindparam("k_id"),
        OPS.c.lease_owner == bindparam("k_owner"),
        OPS.c.lease_token == bindparam("k_token"),
    )
    .values({k: bindparam(k) for k in [*STEP_FIELDS, "updated_at"]})
)
_READ = select(OPS).where(OPS.c.id == bindparam("k_id"))
_HIST = insert(HIST)


def _step_params(now: datetime) -> dict[str, Any]:
    return {**STEP_FIELDS, "updated_at": now, "k_id": OP_ID, "k_owner": "bench", "k_token": 1}


Kinds = dict[str, Callable[[], Awaitable[None]]]


async def measure(kinds: Kinds, n: int) -> dict[str, float]:
    out = {}
    for name, fn in kinds.items():
        for _ in range(200):  # warm: pool, compiled statements
            await fn()
        c0 = cpu()
        for _ in range(n):
            await fn()
        out[name] = (cpu() - c0) / n * 1e6
    return out


async def jobgate_way(url: str, n: int, now: datetime) -> dict[str, float]:
    db = Database(url, info=audit.session_info(False, None))

    async def write() -> None:
        async with db.transaction() as txn:
            hit = await repo.fenced_update(
                txn, OP_ID, fence=FENCE, at=now, fields=dict(STEP_FIELDS)
            )
            assert hit, "the step's UPDATE must hit the row"
            await repo.append_history_rows(txn, history(now))

    async def read() -> None:
        async with db.read() as txn:
            op = await repo.get(txn, OP_ID)
            assert op is not None and op.id == OP_ID

    try:
        return await measure({"step write": write, "read of one operation": read}, n)
    finally:
        await db.dispose()


async def core_way(url: str, n: int, now: datetime) -> dict[str, float]:
    """SQLAlchemy Core's public execution API, the same statements, no ORM session."""
    params = _step_params(now)
    if url.startswith("sqlite"):
        engine = create_engine(sync_url(url))

        async def write() -> None:
            with engine.begin() as conn:
                assert conn.execute(_UPDATE, params).rowcount == 1
                conn.execute(_HIST, history(now))

        async def read() -> None:
            with engine.connect() as conn:
                row = conn.execute(_READ, {"k_id": OP_ID}).one()
                assert Operation(**row._mapping).id == OP_ID

        try:
            return await measure({"step write": write, "read of one operation": read}, n)
        finally:
            engine.dispose()
    aengine = create_async_engine(async_url(url))

    async def awrite() -> None:
        async with aengine.begin() as conn:
            assert (await conn.execute(_UPDATE, params)).rowcount == 1
            await conn.execute(_HIST, history(now))

    async def aread() -> None:
        async with aengine.connect() as conn:
            row = (await conn.execute(_READ, {"k_id": OP_ID})).one()
            assert Operation(**row._mapping).id == OP_ID

    try:
        return await measure({"step write": awrite, "read of one operation": aread}, n)
    finally:
        await aengine.dispose()


_SET = ", ".join(f"{k} = ?" for k in [*STEP_FIELDS, "updated_at"])
_SQL_UPDATE = f"UPDATE operations SET {_SET} WHERE id = ? AND lease_owner = ? AND lease_token = ?"
_SQL_HIST = (
    "INSERT INTO operation_history (operation_id, at, kind, actor, from_state, to_state,"
    " cause, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_SQL_READ = "SELECT * FROM operations WHERE id = ?"


def _dollar(sql: str) -> str:
    parts = sql.split("?")
    return "".join(p + (f"${i + 1}" if i < len(parts) - 1 else "") for i, p in enumerate(parts))


def _driver_args(now: datetime, pg: bool) -> tuple[list[Any], list[tuple[Any, ...]]]:
    at: Any = now.replace(tzinfo=None) if pg else now.isoformat()
    update_args = [*STEP_FIELDS.values(), at, OP_ID, "bench", 1]
    rows = [
        (
            h["operation_id"],
            at,
            h["kind"],
            h["actor"],
            None,
            None,
            h["cause"],
            json.dumps(h["data"]),
        )
        for h in history(now)
    ]
    return update_args, rows


async def driver_way(url: str, n: int, now: datetime) -> dict[str, float]:
    """The same SQL on the driver alone (values sent as the driver takes them)."""
    if url.startswith("sqlite"):
        from app.core.db.database import sqlite_path

        conn = sqlite3.connect(sqlite_path(url), isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        update_args, rows = _driver_args(now, pg=False)

        async def write() -> None:
            conn.execute("BEGIN IMMEDIATE")
            assert conn.execute(_SQL_UPDATE, update_args).rowcount == 1
            conn.executemany(_SQL_HIST, rows)
            conn.execute("COMMIT")

        async def read() -> None:
            assert conn.execute(_SQL_READ, (OP_ID,)).fetchone()[0] == OP_ID

        try:
            return await measure({"step write": write, "read of one operation": read}, n)
        finally:
            conn.close()
    from app.core.db.drivers.pg_conn import dsn

    pg = await asyncpg.connect(dsn(url))
    update_args, rows = _driver_args(now, pg=True)
    sql_update, sql_hist, sql_read = map(_dollar, (_SQL_UPDATE, _SQL_HIST, _SQL_READ))
    sql_hist = sql_hist.replace("$8)", "$8::json)")

    async def pwrite() -> None:
        async with pg.transaction():
            assert await pg.execute(sql_update, *update_args) == "UPDATE 1"
            await pg.executemany(sql_hist, rows)

    async def pread() -> None:
        assert (await pg.fetchrow(sql_read, OP_ID))[0] == OP_ID

    try:
        return await measure({"step write": pwrite, "read of one operation": pread}, n)
    finally:
        await pg.close()


WAYS = {"jobgate": jobgate_way, "core": core_way, "driver": driver_way}


async def one_round(url: str, n: int) -> dict[str, float]:
    """Microseconds of CPU per transaction, by way and kind."""
    now = datetime.now(UTC)
    db = Database(url)
    async with db.transaction() as txn:
        await txn.execute(insert(OPS), seed_rows(now))
    await db.dispose()
    out: dict[str, float] = {}
    for way, fn in WAYS.items():
        for kind, us in (await fn(url, n, now)).items():
            out[f"{kind}|{way}"] = us
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pg-url", default=None, help="also on PostgreSQL (server URL ending in /)")
    args = ap.parse_args()
    backends = {"SQLite": None} | ({"PostgreSQL": args.pg_url} if args.pg_url else {})
    runs: dict[str, list[dict[str, float]]] = {b: [] for b in backends}
    for _ in range(args.rounds):
        for backend, pg_url in backends.items():
            with migrated_database(pg_url) as url:
                runs[backend].append(asyncio.run(one_round(url, args.n)))
    print(f"transaction_cost: {args.n} transactions per kind and way, {args.rounds} rounds,")
    print("CPU us per transaction (medians), and the ratio to `jobgate`")
    for backend, rounds in runs.items():
        print(f"  {backend}")
        for kind in ("step write", "read of one operation"):
            base = statistics.median(r[f"{kind}|jobgate"] for r in rounds)
            for way in WAYS:
                us = statistics.median(r[f"{kind}|{way}"] for r in rounds)
                print(f"    {kind:22} {way:8} {us:8.0f} us  {us / base:5.2f}x")


if __name__ == "__main__":
    main()
