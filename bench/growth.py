"""Growth: what N finished operations cost in bytes and in read latency, and how fast
the retention prune removes them (docs/performance.md, "Growth").

Fills a fresh, migrated database with N operations by plain SQL inserts (SQLAlchemy
Core executemany; no gateway, so a million takes minutes, not days), shaped like the
mock's `fast` job as the gateway writes it today: one operation row with its input,
an inline result and a summary; 4 history rows (intent, create exchange, accepted,
finished) and their 4 audit entries, hash-chained as the trail chains them. Created
times are spread evenly over the last 60 days; 20 are still in flight (among the
newest 1 %, whatever N), 0.1 % need a person (the last 2 %), the rest finished. Then
it measures, through the real app in-process (ASGI, dev auth; the latency is the
gateway's, no network):

- bytes per operation: the database's size after the fill (SQLite: pages in use;
  PostgreSQL: pg_database_size) minus the empty schema's, over N;
- p50 / p99 of `GET /v1/operations?limit=50` (newest first), of the in-flight page
  (`?in_flight=true`, what the MCP `list_operations` asks first), of the succeeded page
  (`?status=succeeded`) and of `GET /v1/operations/{id}` for random ids (a pruned one
  answers 410, read the same way);
- the prune of everything finished more than 30 days ago (about half), in the
  observer's batches: operations per second, audit entries checkpointed;
- `audit verify` of the pruned chain: intact, and how long it took.

    .venv/bin/python bench/growth.py [--rows 20000] [--samples 200]
        [--pg-url postgresql://postgres@127.0.0.1:5432/] [--no-sqlite]

`--rows 1000000` is the real run (tens of minutes per database on a small machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from end_to_end import fresh_database  # noqa: E402

from app.audit.chain import GENESIS, Entry, canonical_payload, entry_hash  # noqa: E402
from app.audit.commands import verify_database  # noqa: E402
from app.audit.models import AuditEntry  # noqa: E402
from app.audit.trail import audited_database  # noqa: E402
from app.core.config import Settings  # noqa: E402
from app.core.db.database import is_sqlite, sync_url  # noqa: E402
from app.core.db.migrate import upgrade  # noqa: E402
from app.core.db.row_table import table_of  # noqa: E402
from app.operations.repository.tables import HIST, OPS  # noqa: E402
from app.results.store import ResultStore  # noqa: E402
from app.retention.prune import Plan, prune_all  # noqa: E402

LOG = table_of(AuditEntry)
CHUNK = 2000  # operations per insert transaction
PRINCIPALS = [f"agent-{i}" for i in range(20)]
DAYS = 60
RETENTION_DAYS = 30
IN_FLIGHT = 2000  # the newest 1 % holds 1 in flight per 2000 rows / 100: 20, whatever N


def _op(i: int, now: datetime, rng: random.Random, rows: int) -> dict[str, Any]:
    age = timedelta(days=DAYS) * (1 - i / rows)  # oldest first, as they were written
    created = now - age
    kind = rng.random()
    state, outcome, next_poll = "succeeded", "succeeded", None
    if i % (rows // IN_FLIGHT) == rows // IN_FLIGHT - 1 and i >= rows * 0.99:
        state, outcome, next_poll = "observing", None, now + timedelta(seconds=30)
    elif i >= rows * 0.98 and kind < 0.05:
        state, outcome = "stalled", None
    finished = created + timedelta(seconds=rng.uniform(5, 600))
    op_id = f"op_g{i:010d}"
    return {
        "id": op_id, "principal": PRINCIPALS[i % len(PRINCIPALS)],
        "idempotency_key": f"key-{i}", "fingerprint": f"sha256:{i:064x}",
        "provider": "mock", "kind": "report",
        "input": {"scenario": {"name": "fast"}, "week": i % 52, "text": "x" * 80},
        "provider_token": f"jg_{i:032x}", "trace_id": f"tr_{i:032x}",
        "single_create": "token", "state": state, "version": 4,
        "remote_job_id": f"job_{i:024x}", "remote_status_url": None,
        "remote_cancel_url": None, "remote_state": "succeeded" if outcome else "running",
        "remote_class": "done" if outcome else "running",
        "progress_completed": 3, "progress_total": 3,
        "create_deadline_at": created + timedelta(minutes=5),
        "result_deadline_at": created + timedelta(hours=1),
        "cancel_deadline_at": None, "cancel_seconds": None,
        "next_poll_at": next_poll, "poll_attempt": 3, "next_poll_reason": None,
        "quiet_polls": 0, "quiet_last_at": None,
        "lease_owner": None, "lease_expires_at": None, "lease_token": 3, "step_failures": 0,
        "result": {"report": f"report {i}", "rows": [1, 2, 3]} if outcome else None,
        "result_ref": None, "result_size": 48 if outcome else None,
        "result_sha256": f"{i:064x}" if outcome else None,
        "result_summary": {"items": 3, "failed": 0} if outcome else None,
        "outcome": outcome, "error": None, "cancel_reason": None,
        "cancel_requested_by": None, "cancel_requested_at": None,
        "acknowledged_at": None, "acknowledged_by": None, "callback_url": None,
        "labels": {"task": str(i % 100)}, "approval": None, "cost": None, "gate": None,
        "validation": None, "created_at": created,
        "updated_at": finished if outcome else created,
    }  # fmt: skip


def _history(op: dict[str, Any]) -> list[dict[str, Any]]:
    t0, t1 = op["created_at"], op["updated_at"]
    rows = [
        ("transition", None, "create_pending", "intent recorded before any provider call",
         {"fingerprint": op["fingerprint"], "idempotency_key": op["idempotency_key"],
          "provider_token": op["provider_token"], "trace_id": op["trace_id"]}),
        ("exchange", None, None, "create",
         {"operation": "create", "method": "POST", "status_code": 202, "ms": 9}),
        ("transition", "create_pending", "accepted", "provider accepted the job",
         {"remote_job_id": op["remote_job_id"]}),
        ("transition", "result_collecting", op["state"], "result collected and valid",
         {"result_sha256": op["result_sha256"], "size": op["result_size"]}),
    ]  # fmt: skip
    return [
        {"operation_id": op["id"], "at": t0 if n < 3 else t1, "kind": kind,
         "actor": "observer:bench", "cause": cause, "from_state": frm, "to_state": to,
         "data": data}
        for n, (kind, frm, to, cause, data) in enumerate(rows)
    ]  # fmt: skip


class Chain:
    """Audit entries chained as the trail chains them, in the order given."""

    def __init__(self) -> None:
        self.seq, self.prev = 0, GENESIS

    def entries(self, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for h in history:
            self.seq += 1
            payload = canonical_payload(
                {"history_kind": h["kind"], "cause": h["cause"], "from_state": h["from_state"],
                 "to_state": h["to_state"], "data": h["data"]}
            )  # fmt: skip
            kind = "intent" if h["from_state"] is None and h["kind"] == "transition" else h["kind"]
            e = Entry(self.seq, h["at"], kind, h["operation_id"], h["actor"], payload, self.prev)
            digest = entry_hash(e)
            out.append(
                {"seq": e.seq, "at": e.at, "kind": e.kind, "operation_id": e.operation_id,
                 "actor": e.actor, "payload": e.payload, "prev_hash": e.prev_hash,
                 "hash": digest}
            )  # fmt: skip
            self.prev = digest
        return out


def db_bytes(url: str) -> int:
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            if is_sqlite(url):
                conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
                pages = conn.exec_driver_sql("PRAGMA page_count").scalar_one()
                free = conn.exec_driver_sql("PRAGMA freelist_count").scalar_one()
                size = conn.exec_driver_sql("PRAGMA page_size").scalar_one()
                return int((pages - free) * size)
            # Statistics, as autovacuum would have gathered them over the 60 days the fill
            # stands for (committed: ANALYZE's statistics are rolled back with its
            # transaction, and without them a prune batch scans the whole history table).
            conn.execute(text("ANALYZE"))
            conn.commit()
            size_sql = text("SELECT pg_database_size(current_database())")
            return int(conn.execute(size_sql).scalar_one())
    finally:
        engine.dispose()


def fill(url: str, rows: int, now: datetime, seed: int = 7) -> tuple[float, list[str]]:
    """Insert `rows` operations; returns (seconds, every id)."""
    rng = random.Random(seed)
    chain = Chain()
    ids: list[str] = []
    engine = create_engine(sync_url(url))
    t0 = time.perf_counter()
    pg = not is_sqlite(url)
    try:
        for start in range(0, rows, CHUNK):
            ops = [_op(i, now, rng, rows) for i in range(start, min(rows, start + CHUNK))]
            hist = [h for op in ops for h in _history(op)]
            audit = chain.entries(hist)
            with engine.begin() as conn:
                if pg:  # no per-row head move: one UPDATE of one row 8000 times in a
                    # transaction walks an ever longer version chain (quadratic)
                    conn.execute(text("SET LOCAL session_replication_role = replica"))
                conn.execute(OPS.insert(), ops)
                conn.execute(HIST.insert(), hist)
                conn.execute(LOG.insert(), audit)
                if pg:
                    conn.execute(
                        text("UPDATE audit_head SET seq = :s, hash = :h WHERE id = 1"),
                        {"s": chain.seq, "h": chain.prev},
                    )
            ids.extend(op["id"] for op in ops)
    finally:
        engine.dispose()
    return time.perf_counter() - t0, ids


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def latencies(
    settings: Settings, ids: list[str], samples: int, seed: int = 11
) -> dict[str, tuple[float, float]]:
    """(p50, p99) in ms of each read, through the app in-process."""
    from app.main import create_app

    rng = random.Random(seed)
    app = create_app(settings, run_observer=False)
    out: dict[str, tuple[float, float]] = {}
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            reads = {
                "list newest 50": lambda: "/v1/operations?limit=50",
                "list in flight 50": lambda: "/v1/operations?limit=50&in_flight=true",
                "list succeeded 50": lambda: "/v1/operations?limit=50&status=succeeded",
                "GET one": lambda: f"/v1/operations/{rng.choice(ids)}",
            }
            for name, path in reads.items():
                times = []
                for n in range(samples + 5):
                    t0 = time.perf_counter()
                    r = await http.get(path())
                    elapsed = (time.perf_counter() - t0) * 1000
                    if r.status_code not in (200, 410):
                        raise SystemExit(f"{name}: {r.status_code} {r.text[:200]}")
                    if n >= 5:  # the first few warm the caches
                        times.append(elapsed)
                out[name] = (statistics.median(times), pct(times, 0.99))
    return out


async def prune(settings: Settings, now: datetime) -> tuple[float, Any]:
    db = audited_database(settings)
    plan = Plan(now=now, retention_seconds=RETENTION_DAYS * 86400.0, batch=settings.prune_batch)
    try:
        t0 = time.perf_counter()
        tally = await prune_all(db, ResultStore(settings.data_dir), plan)
        return time.perf_counter() - t0, tally
    finally:
        await db.dispose()


def run_one(kind: str, url: str, rows: int, samples: int, tmp: Path) -> dict[str, Any]:
    upgrade(url)
    empty = db_bytes(url)
    now = datetime.now(UTC)
    seconds, ids = fill(url, rows, now)
    size = db_bytes(url) - empty
    settings = Settings(database_url=url, data_dir=tmp / kind, auth="dev")
    reads = asyncio.run(latencies(settings, ids, samples))
    prune_s, tally = asyncio.run(prune(settings, now))
    t0 = time.perf_counter()
    report = verify_database(url, None)
    verify_s = time.perf_counter() - t0
    after = asyncio.run(latencies(settings, ids, samples))
    return {
        "database": kind, "rows": rows, "fill_s": round(seconds, 1),
        "bytes_per_operation": round(size / rows),
        "reads_ms": {k: [round(v, 2) for v in pv] for k, pv in reads.items()},
        "reads_after_prune_ms": {k: [round(v, 2) for v in pv] for k, pv in after.items()},
        "pruned": tally.operations, "prune_s": round(prune_s, 2),
        "prune_ops_per_s": round(tally.operations / prune_s) if prune_s else None,
        "audit_entries_checkpointed": tally.audit_entries,
        "verify_ok": report.ok, "verify_entries": report.count, "verify_s": round(verify_s, 2),
    }  # fmt: skip


def databases(args: argparse.Namespace, tmp: Path) -> Iterator[tuple[str, Any]]:
    if not args.no_sqlite:
        yield "sqlite", fresh_database("sqlite", tmp, "", "growth")
    if args.pg_url:
        yield "postgresql", fresh_database("postgresql", tmp, args.pg_url, "growth")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--pg-url", default="", help="e.g. postgresql://postgres@127.0.0.1:5432/")
    parser.add_argument("--no-sqlite", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        for kind, database in databases(args, tmp):
            with database as (url, _name):
                figures = run_one(kind, url, args.rows, args.samples, tmp)
            print(json.dumps(figures))
            r = figures["reads_ms"]
            print(
                f"{kind}: {args.rows} operations, {figures['bytes_per_operation']} bytes each "
                f"(filled in {figures['fill_s']} s); "
                + "; ".join(f"{k} p50 {v[0]} ms p99 {v[1]} ms" for k, v in r.items())
                + f"; pruned {figures['pruned']} in {figures['prune_s']} s "
                f"({figures['prune_ops_per_s']}/s, {figures['audit_entries_checkpointed']} audit "
                f"entries checkpointed); audit verify "
                f"{'intact' if figures['verify_ok'] else 'BROKEN'} in {figures['verify_s']} s"
            )


if __name__ == "__main__":
    main()
