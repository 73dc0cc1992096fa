"""Observer cost per due operation and poll lateness as the in-flight set grows.

For each backend and size N: a fresh migrated database, N operations `observing`
with `next_poll_at` spread uniformly over one poll period of N / due_rate seconds
(so about due_rate operations fall due each second whatever N is), a provider stub
answering every status read "running, poll again in N / due_rate seconds", and the
real `Observer.run()` loop for a fixed wall time after a warm-up. The target: a 10x
larger in-flight set costs at most 1.5x per due operation (median of one run), the
cost being the observer's busy wall time per operation finished, in 0.5 s windows.
Lateness is each status read's arrival at the provider stub minus when it was due: the
seeded time for a first poll (a period can outlast the run), else the previous read plus
its hint. Reads are counted at the stub, not in history rows: a poll that changes
nothing writes none.

    .venv/bin/python bench/observer_scale.py [--backends sqlite,postgres]
        [--sizes 1000,10000] [--seconds 20] [--due-per-second 200] [--big] [--explain]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import psycopg
from sqlalchemy import create_engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.config import Settings
from app.core.db import txn
from app.core.db.database import sync_url
from app.core.db.migrate import upgrade
from app.core.runtime import event_loop
from app.core.runtime.clock import SystemClock
from app.main import build_context
from app.observer.worker import Observer
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.repository.tables import OPS

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
PG_BASE = "postgresql://postgres@127.0.0.1:5432/"
WARMUP_SECONDS = 3.0  # observer runs this long before windows are counted
WINDOW_SECONDS = 0.5  # busy time and operations finished are summed per window
TARGET_RATIO = 1.5  # allowed per-due-op cost growth for a 10x larger in-flight set
SEED_CHUNK = 5_000  # rows per insert call (SQLAlchemy batches many rows per statement)
B0 = datetime(2026, 1, 1, tzinfo=UTC)  # engine time at which the observer starts


class ShiftedClock(SystemClock):
    """The wall clock, shifted so that the observer starts exactly at B0.

    Seeding takes a size-dependent time; rows are seeded relative to B0 and the
    clock is anchored when the loop starts, so no backlog builds up meanwhile.
    """

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def anchor(self) -> None:
        self.offset = datetime.now(UTC) - B0

    def now(self) -> datetime:
        return super().now() - self.offset


class TimedObserver(Observer):
    """The real observer (its `run()` pipeline); while measuring, the busy wall time and
    the operations finished are kept per WINDOW_SECONDS window.

    Busy means at least one operation in progress, so a window's busy ms / operations
    is the cost of one due operation whether the observer is saturated or not.
    """

    def __init__(self, engine: AppContext) -> None:
        super().__init__(engine)
        self.measuring = False
        self.ticks: list[tuple[float, int]] = []  # (busy seconds, operations) per window
        self._inflight, self._done, self._busy = 0, 0, 0.0
        self._busy_since = self._window_start = time.perf_counter()

    async def _process(self, op: Any, fence: Any = None) -> None:
        if self._inflight == 0:
            self._busy_since = time.perf_counter()
        self._inflight += 1
        try:
            await super()._process(op, fence)
        finally:
            self._inflight -= 1
            now = time.perf_counter()
            if self._inflight == 0:
                self._busy += now - self._busy_since
            self._done += 1 if self.measuring else 0
            if now - self._window_start >= WINDOW_SECONDS:
                busy = self._busy + (now - self._busy_since if self._inflight else 0.0)
                if self.measuring and self._done:
                    self.ticks.append((busy, self._done))
                self._busy, self._done, self._window_start = 0.0, 0, now
                self._busy_since = now


@dataclass
class Case:
    backend: str
    size: int
    ticks: list[tuple[float, int]] = field(default_factory=list)
    seconds: float = 0.0
    lateness_ms: list[float] = field(default_factory=list)
    hint: float = 0.0
    clamped: bool = False

    def per_op_ms(self) -> list[float]:
        return [dt * 1000 / n for dt, n in self.ticks]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


@contextlib.contextmanager
def fresh_database(backend: str, tmp: Path) -> Iterator[str]:
    """A migrated, empty database; PostgreSQL ones are dropped afterwards."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp / f'bench-{secrets.token_hex(4)}.db'}"
        upgrade(url)
        yield url
        return
    name = f"jobgate_bench_{secrets.token_hex(6)}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        url = PG_BASE + name
        upgrade(url)
        yield url
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def seed(url: str, n: int, period: float) -> dict[str, datetime]:
    """Insert n observing operations due uniformly over [B0, B0 + period); returns id -> due."""
    rng = random.Random(n)
    slots = list(range(n))
    rng.shuffle(slots)  # heap order must not follow due order, as in a real table
    far, then = B0 + timedelta(days=2), B0 - timedelta(minutes=5)
    common: dict[str, Any] = dict(
        principal="bench", provider="mock", kind="report", state="observing"
    )
    common |= dict(version=2, poll_attempt=1, lease_token=1, created_at=then, updated_at=then)
    common |= dict(create_deadline_at=far, result_deadline_at=far)
    due: dict[str, datetime] = {}
    rows: list[dict[str, Any]] = []
    for i, slot in enumerate(slots):
        op_id = f"op_bench{i:08d}"
        due[op_id] = B0 + timedelta(seconds=period * slot / n)
        rows.append(
            common
            | dict(id=op_id, idempotency_key=f"k{i}", fingerprint=f"sha256:{i:064x}")
            | dict(input={"i": i}, provider_token=f"jg_bench_{i}", trace_id=f"tr_{i:032x}")
            | dict(remote_job_id=f"job_{i}", next_poll_at=due[op_id])
        )
    eng = create_engine(sync_url(url))
    with eng.begin() as conn:
        for k in range(0, n, SEED_CHUNK):
            conn.execute(OPS.insert(), rows[k : k + SEED_CHUNK])
    if eng.dialect.name == "postgresql":  # what autovacuum would have done by now
        with eng.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE operations")
    eng.dispose()
    return due


async def explain_claim(engine: AppContext) -> str:
    """The plan of the exact UPDATE `repo.claim_due` sends (captured, then rolled back)."""
    captured: list[tuple[str, Any]] = []

    class Grab(txn.Probe):
        def statement(self, _t: Any, sql: str, args: Any, _s: float) -> None:
            if sql.lstrip().upper().startswith("UPDATE") and not captured:
                captured.append((sql, args))

    class Undo(Exception):
        """Leaves the claim uncommitted."""

    grab = Grab()
    txn.PROBES.append(grab)
    plan: list[Any] = []
    try:
        async with engine.db.transaction() as t:
            await repo.claim_due(
                t,
                now=engine.now(),
                owner="explain",
                lease_seconds=30,
                limit=100,
                skip_locked=not engine.db.is_sqlite,
            )
            stmt, params = captured[0]
            prefix = "EXPLAIN QUERY PLAN " if engine.db.is_sqlite else "EXPLAIN (ANALYZE, BUFFERS) "
            plan, _count, _names = await t.connection.execute(prefix + stmt, params, True)
            raise Undo
    except Undo:
        pass
    finally:
        txn.PROBES.remove(grab)
    return "\n".join("    " + " | ".join(str(c) for c in row) for row in plan)


def status_stub(
    period: float, clock: ShiftedClock, polls: list[tuple[str, datetime]]
) -> httpx2.MockTransport:
    """The mock profile's status shape, always running, asking to be polled after `period`;
    every status read is recorded where it arrives (`polls`: remote job id, clock time),
    since a poll that changes nothing writes no history row (docs/architecture.md)."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        job_id = request.url.path.rsplit("/", 1)[-1]
        polls.append((job_id, clock.now()))
        body = {
            "job_id": job_id,
            "state": "running",
            "progress": {"completed": 1, "total": 10},
            "poll_after_seconds": period,
        }
        return httpx2.Response(200, json=body)

    return httpx2.MockTransport(handler)


def lateness(
    polls: list[tuple[str, datetime]],
    due: dict[str, datetime],
    hint: float,
    t0: datetime,
    t1: datetime,
) -> list[float]:
    """Each status read's arrival at the provider minus when it was due (seeded for a
    first poll, else the previous read plus the hint)."""
    expected = {f"job_{int(op_id.removeprefix('op_bench'))}": at for op_id, at in due.items()}
    out: list[float] = []
    for job_id, got in polls:
        if t0 <= got <= t1:
            out.append((got - expected[job_id]).total_seconds() * 1000)
        expected[job_id] = got + timedelta(seconds=hint)
    return out


async def run_case(backend: str, size: int, args: argparse.Namespace, tmp: Path) -> Case:
    case = Case(backend, size)
    period = size / args.due_per_second
    with fresh_database(backend, tmp) as url:
        due = seed(url, size, period)
        clock = ShiftedClock()
        settings = Settings(
            database_url=url,
            data_dir=tmp / "data",
            auth="dev",
            observer_batch=100,
            lease_seconds=30,
            observer_id="bench",
        )
        polls: list[tuple[str, datetime]] = []
        async with httpx2.AsyncClient(transport=status_stub(period, clock, polls)) as http:
            engine = build_context(settings, clock=clock, http=http)
            max_hint = engine.profiles["mock"].polling.max_seconds
            case.hint, case.clamped = min(period, max_hint), period > max_hint
            observer = TimedObserver(engine)
            clock.anchor()
            task = asyncio.create_task(observer.run())
            await asyncio.sleep(WARMUP_SECONDS)
            observer.measuring, t0, w0 = True, engine.now(), time.perf_counter()
            await asyncio.sleep(args.seconds)
            observer.measuring, t1 = False, engine.now()
            case.seconds = time.perf_counter() - w0
            observer.stop()
            await task
            case.ticks = observer.ticks
            case.lateness_ms = lateness(polls, due, case.hint, t0, t1)
            if args.explain:
                plan = await explain_claim(engine)
                print(f"  claim plan, {backend}, {size} in flight:\n{plan}", flush=True)
            await engine.db.dispose()
    return case


def report(backend: str, cases: list[Case], due_rate: float) -> None:
    print(f"\n{backend}  (medians/percentiles over 0.5 s windows that finished work, one run)")
    print(
        f"  {'in flight':>9} {'wins':>6} {'ms/op p50':>10} {'ms/op p99':>10} "
        f"{'ops/s':>7} {'polls':>6} {'late p50 ms':>12} {'late p99 ms':>12}"
    )
    for c in cases:
        per_op, rate = c.per_op_ms(), len(c.lateness_ms) / c.seconds  # polls in the window
        note = f"  hint clamped to {c.hint:g}s" if c.clamped else ""
        note += "  SATURATED: lateness grows with run length" if rate < 0.85 * due_rate else ""
        print(
            f"  {c.size:>9} {len(c.ticks):>6} {median(per_op):>10.3f} "
            f"{pct(per_op, 0.99):>10.3f} {rate:>7.1f} {len(c.lateness_ms):>6} "
            f"{pct(c.lateness_ms, 0.5):>12.0f} {pct(c.lateness_ms, 0.99):>12.0f}{note}"
        )
    for small, large in zip(cases, cases[1:], strict=False):
        ratio = median(large.per_op_ms()) / median(small.per_op_ms())
        verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
        print(
            f"  ratio {large.size}/{small.size} of median ms per due op: {ratio:.2f}x  "
            f"{verdict} (target <= {TARGET_RATIO}x)"
        )


async def main_async(args: argparse.Namespace) -> None:
    sizes = [int(s) for s in args.sizes.split(",")] + ([100_000] if args.big else [])
    started = time.perf_counter()
    print(
        f"due rate {args.due_per_second}/s at every size (hint = period = N / due rate), "
        f"warm-up {WARMUP_SECONDS:g}s, measured {args.seconds:g}s per case, batch 100, "
        f"observer interval 1s"
    )
    for backend in args.backends.split(","):
        cases = []
        for size in sizes:
            with tempfile.TemporaryDirectory(prefix="jobgate-obs-") as tmp:
                print(f"  running {backend} with {size} in flight ...", flush=True)
                cases.append(await run_case(backend, size, args, Path(tmp)))
        report(backend, cases, args.due_per_second)
    print(f"\ntotal wall time {time.perf_counter() - started:.0f}s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--due-per-second", type=float, default=200.0)
    ap.add_argument("--big", action="store_true", help="also 100,000 in flight")
    ap.add_argument("--explain", action="store_true", help="print the claim query's plan")
    event_loop.run(main_async(ap.parse_args()))  # the loop `jobgate observe` runs on


if __name__ == "__main__":
    main()
