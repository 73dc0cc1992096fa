"""End to end: the same provider jobs done by jobgate, by DBOS Transact and by a bare loop.

Every contender does the same work in one run: N jobs (default 600), C at a time
(default 32), each created at the bundled mock provider (`jobgate mock-provider`,
scenario `slow` with `polls: 3`), then polled until done through 3 "running"
answers about 10 ms apart, then its result fetched and its sha256 checked. The
polls are 10 ms apart for everyone in the same way: the mock answers a poll hint
of 2 s (= the mock profile's first delay) and every contender multiplies delays
by the same time scale 0.005 (`JOBGATE_TIME_SCALE` for jobgate). Each contender
gets a fresh mock (in-memory state), a fresh database and an untimed warm-up of
C jobs first.

    make bench-e2e                          # installs the `bench` extra, runs everything
    .venv/bin/python bench/end_to_end.py [--jobs 600] [--concurrency 32] [--rounds 1]
        [--only ceiling,jobgate-sqlite,jobgate-postgres,dbos-sqlite,dbos-postgres]
        [--poll-ms 10] [--pg-url postgresql://postgres@127.0.0.1:5432/] [--json]
        [--gateway-env JOBGATE_OBSERVER_BATCH=50 ...] [--py-spy DIR] [--render FILE.json]

Every HTTP client on the bench's side (the ceiling's and DBOS's provider calls, jobgate's
agents) is httpx2, the library the gateway makes its provider calls with.

Contenders (table rows; columns are the database each one writes to):
- `ceiling`: a plain asyncio + HTTP client loop in its own process; no durability, no
  database (the upper bound on this machine).
- `jobgate-sqlite` / `jobgate-postgres`: a real `jobgate serve` process (with its
  in-process observer) on a fresh database; agents (this process) POST
  `/v1/operations` and then call `/wait` until the operation is done.
- `dbos-sqlite` / `dbos-postgres`: DBOS Transact (`pip install -e '.[bench]'`), one
  durable workflow per job (a create step, durable sleeps, status steps, a result
  step) in its own process, its system database on SQLite or PostgreSQL.

Columns of the detail table (medians over rounds):
- `jobs/s`: timed jobs / wall time from the first create to the last job done.
- `lat p50/p99`: one job's time from create to done, in ms.
- `1st poll`: ms from the create call to the first status call, at the mock.
- `gap p50/p99`: ms between consecutive status calls of one job, at the mock
  (the target is the 10 ms the provider asked for).
- `cpu ms/job`: CPU (user + system, /proc/<pid>/stat) of the process doing the
  work, per job: the gateway for jobgate (not the agents), the worker process
  for the ceiling and for DBOS (whose agents live in it).
- `commits/job`: COMMITs in that process, all / those whose transaction wrote
  (`bench/e2e_probe.py`: jobgate's transaction probes, SQLAlchemy's event listeners
  for DBOS; the only way on SQLite). `xact/job`: PostgreSQL's own
  `pg_stat_database.xact_commit` delta for the contender's database, the check on the
  former (jobgate's PostgreSQL reads send no BEGIN: each counts as a transaction there).
- Below the table, per contender: the mock's and the agents' CPU per job, and for
  jobgate on PostgreSQL the server's (all its processes, timed phase): with the
  gateway's, what shares the machine's cores.
- `hist/job`: jobgate history rows per operation (by kind with `--json`).
- `calls/job`: provider calls per job at the mock (creates + status + result +
  cancel), from `/_mock/stats`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import folded_top
from e2e_probe import cpu_seconds, pg_xact, postgres_cpu_seconds, runq_wait_seconds
from e2e_workers import PG_SETTLE_SECONDS, WARMUP_OFFSET
from http_clients import LIBRARIES, pooled
from sqlalchemy import create_engine, text

from app.core.db.database import sync_url
from app.core.db.migrate import upgrade
from app.providers.language.loader import load_profile
from tests.support.processes import Process, free_port, wait_healthy

CONTENDERS = ("ceiling", "jobgate-sqlite", "dbos-sqlite", "jobgate-postgres", "dbos-postgres")
POLLS = 3  # "running" answers before the terminal one
WAIT_TIMEOUT_S = 60  # one /wait call; agents call again until the operation is done
DEADLINES = {"create_seconds": 120, "result_seconds": 3600}  # real seconds, not scaled
# A process becoming healthy; the test suite scales it on slow machines (tests/support/timing.py).
START_TIMEOUT_S = 30.0 * max(1.0, float(os.environ.get("JOBGATE_TEST_TIME_FACTOR") or 1))


def mock_profile_first_delay() -> tuple[float, float, float]:
    """(initial, min, max) poll seconds of the built-in mock profile."""
    path = ROOT / "app" / "providers" / "profiles" / "mock.yaml"
    profile = load_profile(path, {"JOBGATE_MOCK_PROVIDER_URL": "http://127.0.0.1:1"})
    p = profile.polling
    return p.initial_seconds, p.min_seconds, p.max_seconds


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def med(values: list[float]) -> float:
    clean = [v for v in values if v == v]  # drop NaN
    return statistics.median(clean) if clean else float("nan")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# --- processes and databases ---------------------------------------------------------


class Script(Process):
    """A Python script of this folder as a subprocess (the same env handling as `Process`)."""

    def start(self) -> Script:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
        full_env.update(self.env)
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [sys.executable, *self.args], env=full_env, stdout=fh, stderr=subprocess.STDOUT
            )
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid


@contextlib.contextmanager
def mock_provider(tmp: Path) -> Iterator[tuple[str, int]]:
    """A fresh mock provider process with in-memory state."""
    port = free_port()
    proc = Process(
        ["mock-provider", "--port", str(port)],
        {"JOBGATE_MOCK_STATE_PATH": ":memory:"},
        tmp / "mock.log",
    ).start()
    url = f"http://127.0.0.1:{port}"
    try:
        ends = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                httpx2.get(f"{url}/_mock/stats", timeout=1)
                break
            except httpx2.HTTPError:
                if time.monotonic() > ends or not proc.alive():
                    log = proc.log.read_text()[-2000:]
                    raise RuntimeError(f"mock did not start:\n{log}") from None
                time.sleep(0.05)
        assert proc.proc is not None
        yield url, proc.proc.pid
    finally:
        proc.kill()


@contextlib.contextmanager
def fresh_database(kind: str, tmp: Path, pg_url: str, prefix: str) -> Iterator[tuple[str, str]]:
    """(SQLAlchemy URL, PostgreSQL database name or "") of an empty database."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp / f'{prefix}-{secrets.token_hex(4)}.db'}", ""
        return
    import psycopg

    name = f"{prefix}_{secrets.token_hex(6)}"
    admin = pg_url + "postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield pg_url + name, name
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


# --- what the mock saw ---------------------------------------------------------------


async def provider_figures(mock_url: str, references: list[str]) -> dict[str, Any]:
    """Provider calls per job and poll timing, from the mock's counters and call log."""
    async with httpx2.AsyncClient(base_url=mock_url, timeout=60) as client:
        stats = (await client.get("/_mock/stats")).json()
        by_ref = stats["jobs_by_reference"]
        job_ids = [j for ref in references for j in by_ref.get(ref, [])]
        calls = 0
        for job_id in job_ids:
            job = stats["jobs"][job_id]
            calls += job["status_calls"] + job["result_calls"] + job["cancel_calls"]
            calls += stats["creates_by_token"].get(job["token"], 0)
        sem = asyncio.Semaphore(16)

        async def log(job_id: str) -> list[dict[str, Any]]:
            async with sem:
                body: list[dict[str, Any]] = (
                    await client.get("/_mock/calls", params={"job_id": job_id})
                ).json()
                return body

        logs = await asyncio.gather(*(log(j) for j in job_ids))
    first, gaps = [], []
    for entries in logs:
        at = {
            "create": [datetime.fromisoformat(e["at"]) for e in entries if e["op"] == "create"],
            "status": [datetime.fromisoformat(e["at"]) for e in entries if e["op"] == "status"],
        }
        if at["create"] and at["status"]:
            first.append((at["status"][0] - at["create"][0]).total_seconds() * 1000)
        st = at["status"]
        gaps += [(b - a).total_seconds() * 1000 for a, b in zip(st, st[1:], strict=False)]
    return {
        "jobs_seen": len(job_ids),
        "provider_calls": calls,
        "first_poll_ms": first,
        "poll_gap_ms": gaps,
    }


# --- the contenders ------------------------------------------------------------------


def spec_for(args: argparse.Namespace, mock_url: str, scale: float, first: float) -> dict[str, Any]:
    return {
        "mock_url": mock_url,
        "time_scale": scale,
        "first_delay": first,
        "input": job_input(first),
        "jobs": args.jobs,
        "warmup": args.warmup,
        "concurrency": args.concurrency,
        "run": f"r{uuid.uuid4().hex[:8]}",
        "client": args.client,
    }


def job_input(hint: float) -> dict[str, Any]:
    return {"scenario": {"name": "slow", "polls": POLLS, "poll_after": hint}}


def run_worker(kind: str, spec: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """Run `e2e_workers.py KIND SPEC`; its last stdout line is the JSON result."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "e2e_workers.py"), kind, json.dumps(spec)],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    (tmp / f"{kind}.log").write_text(proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} worker failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def run_external(
    name: str, args: argparse.Namespace, tmp: Path, scale: float, first: float
) -> dict[str, Any]:
    """The ceiling or DBOS, in a worker process against a fresh mock."""
    with mock_provider(tmp) as (mock_url, mock_pid):
        spec = spec_for(args, mock_url, scale, first)
        mock_cpu0 = cpu_seconds(mock_pid)
        if name == "ceiling":
            out = run_worker("ceiling", spec, tmp)
        else:
            db_kind = name.split("-", 1)[1]
            with fresh_database(db_kind, tmp, args.pg_url, "dbos_e2e") as (url, db):
                spec |= {"dbos_url": url, "pg_admin": args.pg_url + "postgres", "pg_db": db}
                out = run_worker("dbos", spec, tmp)
        # the worker's whole run (warm-up too): its timed window is not known here
        out["mock_cpu_per_job"] = (cpu_seconds(mock_pid) - mock_cpu0) / (args.jobs + args.warmup)
        refs = [f"{spec['run']}-{i}" for i in range(args.jobs)]
        out |= asyncio.run(provider_figures(mock_url, refs))
    return out


class Gateway:
    """A `jobgate serve` process (through `e2e_gateway.py`, which counts commits)."""

    def __init__(self, db_url: str, mock_url: str, tmp: Path, scale: float, extra: list[str]):
        self.counters = tmp / "gateway-commits.json"
        self.ticks = tmp / "gateway-ticks.log"
        env = {
            "JOBGATE_DATABASE_URL": db_url,
            "JOBGATE_DATA_DIR": str(tmp / "data"),
            "JOBGATE_MOCK_PROVIDER_URL": mock_url,
            "JOBGATE_AUTH": "dev",
            "JOBGATE_TIME_SCALE": repr(scale),
            "E2E_COUNTERS_PATH": str(self.counters),
            "E2E_TICKS_PATH": str(self.ticks),
        }
        env.update(kv.split("=", 1) for kv in extra)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [str(ROOT / "bench" / "e2e_gateway.py"), "serve", "--port", str(self.port)]
        self.proc = Script([*args, "--log-level", "warning"], env, tmp / "gateway.log")

    def start(self) -> Gateway:
        self.proc.start()
        wait_healthy(self.url, self.proc, START_TIMEOUT_S)
        return self

    def ticks_between(self, t0: float, t1: float) -> list[tuple[float, int]]:
        """(seconds, claimed) of the observer ticks that started in [t0, t1]."""
        if not self.ticks.exists():
            return []
        out = []
        for line in self.ticks.read_text().splitlines():
            start, seconds, claimed = line.split()
            if t0 <= float(start) <= t1:
                out.append((float(seconds), int(claimed)))
        return out

    def commits(self) -> dict[str, float]:
        """Ask the gateway for its commit counts (SIGUSR1) and read them."""
        seq = json.loads(self.counters.read_text())["seq"] if self.counters.exists() else 0
        os.kill(self.proc.pid, signal.SIGUSR1)
        ends = time.monotonic() + 10
        while time.monotonic() < ends:
            with contextlib.suppress(FileNotFoundError, ValueError):
                got: dict[str, float] = json.loads(self.counters.read_text())
                if got["seq"] > seq:
                    return got
            time.sleep(0.01)
        raise TimeoutError("gateway did not dump its commit counts")


async def agents(
    url: str, n: int, conc: int, offset: int, hint: float, client: str = LIBRARIES[0]
) -> dict[str, Any]:
    """n agents, conc at a time: POST the operation, then /wait until it is done; their
    HTTP client library is `client` (the same as the other contenders' provider calls)."""
    sem = asyncio.Semaphore(conc)
    body = {
        "provider": "mock",
        "kind": "report",
        "input": job_input(hint),
        "deadlines": DEADLINES,
    }
    latencies: list[float] = []
    outcomes: list[str] = []
    op_ids: list[str] = []
    async with pooled(client, url, conc, timeout=WAIT_TIMEOUT_S + 30) as c:

        async def one(i: int) -> None:
            async with sem:
                t0 = time.perf_counter()
                try:
                    r = await c.post(
                        "/v1/operations", json=body, headers={"Idempotency-Key": f"e2e-{i}"}
                    )
                    r.raise_for_status()
                    op = r.json()
                    op_ids.append(op["operation_id"])
                    while not op["done"]:
                        r = await c.get(
                            f"/v1/operations/{op['operation_id']}/wait",
                            params={"timeout": WAIT_TIMEOUT_S},
                        )
                        r.raise_for_status()
                        op = r.json()
                    outcomes.append(str(op["outcome"] or op["status"]))
                except Exception as exc:  # counted, not fatal to the run
                    outcomes.append(f"error: {type(exc).__name__}: {exc}"[:200])
                latencies.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(offset + i) for i in range(n)))
        wall = time.perf_counter() - t0
    return {"wall": wall, "latencies": latencies, "outcomes": outcomes, "op_ids": op_ids}


def start_py_spy(out_dir: Path | None, name: str, pid: int) -> subprocess.Popen[bytes] | None:
    """py-spy sampling the gateway for the timed phase: only a thread holding the GIL
    (`--gil`: the Python work of this asyncio server), without pausing it."""
    if out_dir is None:
        return None
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = Path(sys.executable).with_name("py-spy")
    cmd = [str(exe), "record", "--pid", str(pid), "--rate", "200", "--nonblocking", "--gil"]
    cmd += ["--format", "raw", "-o", str(out_dir / f"{name}.folded")]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # attached before the clock starts
    return proc


def stop_py_spy(proc: subprocess.Popen[bytes], out_dir: Path, name: str) -> str:
    proc.send_signal(signal.SIGINT)
    proc.wait(60)
    return folded_top.report(out_dir / f"{name}.folded", 10)


def history_rows(db_url: str, op_ids: list[str]) -> dict[str, int]:
    """History rows of these operations, by kind."""
    eng = create_engine(sync_url(db_url))
    counts: Counter[str] = Counter()
    try:
        with eng.connect() as conn:
            for k in range(0, len(op_ids), 500):
                chunk = op_ids[k : k + 500]
                marks = ", ".join(f":o{j}" for j in range(len(chunk)))
                rows = conn.execute(
                    text(
                        "SELECT kind, count(*) FROM operation_history "
                        f"WHERE operation_id IN ({marks}) GROUP BY kind"
                    ),
                    {f"o{j}": op for j, op in enumerate(chunk)},
                )
                for kind, count in rows:
                    counts[str(kind)] += int(count)
    finally:
        eng.dispose()
    return dict(counts)


def run_jobgate(
    name: str, args: argparse.Namespace, tmp: Path, scale: float, first: float
) -> dict[str, Any]:
    """jobgate on a fresh database: a real gateway process, agents in this process."""
    db_kind = name.split("-", 1)[1]
    with (
        mock_provider(tmp) as (mock_url, mock_pid),
        fresh_database(db_kind, tmp, args.pg_url, "jobgate_e2e") as (url, db),
    ):
        upgrade(url)
        gw = Gateway(url, mock_url, tmp, scale, args.gateway_env).start()
        try:
            mock_cpu0 = cpu_seconds(mock_pid)
            asyncio.run(
                agents(gw.url, args.warmup, args.concurrency, WARMUP_OFFSET, first, args.client)
            )
            if db:
                time.sleep(PG_SETTLE_SECONDS)
                xact0 = pg_xact(args.pg_url + "postgres", db)
            spy = start_py_spy(args.py_spy, name, gw.proc.pid)
            commits0, cpu0, t0 = gw.commits(), cpu_seconds(gw.proc.pid), time.time()
            server0 = postgres_cpu_seconds()
            runq0, agent0 = runq_wait_seconds(gw.proc.pid), time.process_time()
            out = asyncio.run(agents(gw.url, args.jobs, args.concurrency, 0, first, args.client))
            cpu1, commits1, t1 = cpu_seconds(gw.proc.pid), gw.commits(), time.time()
            if db:
                out["db_server_cpu_per_job"] = (postgres_cpu_seconds() - server0) / args.jobs
            out["worker_runq"] = runq_wait_seconds(gw.proc.pid) - runq0
            out["agent_cpu"] = time.process_time() - agent0
            out["mock_cpu_per_job"] = (cpu_seconds(mock_pid) - mock_cpu0) / (
                args.jobs + args.warmup
            )
            out["ticks"] = gw.ticks_between(t0, t1)
            if spy:
                out["profile"] = stop_py_spy(spy, args.py_spy, name)
            out["worker_cpu"] = cpu1 - cpu0
            out["commits"] = {k: commits1[k] - commits0[k] for k in commits0 if k != "seq"}
            out["history"] = history_rows(url, out["op_ids"])
            out |= asyncio.run(provider_figures(mock_url, out["op_ids"]))
        finally:
            gw.proc.terminate()
        if db:
            time.sleep(0.5)
            xact1 = pg_xact(args.pg_url + "postgres", db)
            out["xact"] = {"commit": xact1[0] - xact0[0], "rollback": xact1[1] - xact0[1]}
    del out["op_ids"]
    return out


# --- report --------------------------------------------------------------------------


def summarize(runs: list[dict[str, Any]], jobs: int) -> dict[str, Any]:
    """Medians over rounds of each figure (per job where it says so)."""

    def each(f: Any) -> float:
        return med([f(r) for r in runs])

    def per_job(r: dict[str, Any], value: float) -> float:
        return value / jobs

    s: dict[str, Any] = {
        "jobs_per_s": each(lambda r: jobs / r["wall"]),
        "rounds_jobs_per_s": [jobs / r["wall"] for r in runs],
        "latency_p50_ms": each(lambda r: pct(r["latencies"], 0.5) * 1000),
        "latency_p99_ms": each(lambda r: pct(r["latencies"], 0.99) * 1000),
        "first_poll_p50_ms": each(lambda r: pct(r["first_poll_ms"], 0.5)),
        "poll_gap_p50_ms": each(lambda r: pct(r["poll_gap_ms"], 0.5)),
        "poll_gap_p99_ms": each(lambda r: pct(r["poll_gap_ms"], 0.99)),
        "cpu_ms_per_job": each(lambda r: per_job(r, r["worker_cpu"] * 1000)),
        "provider_calls_per_job": each(lambda r: per_job(r, r["provider_calls"])),
        "runq_ms_per_job": each(lambda r: per_job(r, r.get("worker_runq", float("nan")) * 1000)),
        "mock_cpu_ms_per_job": each(lambda r: r.get("mock_cpu_per_job", float("nan")) * 1000),
        "db_server_cpu_ms_per_job": each(
            lambda r: r.get("db_server_cpu_per_job", float("nan")) * 1000
        ),
        "agent_cpu_ms_per_job": each(lambda r: per_job(r, r.get("agent_cpu", float("nan")) * 1000)),
        "not_succeeded": sum(sum(o != "succeeded" for o in r["outcomes"]) for r in runs),
        "examples_not_succeeded": sorted({o for r in runs for o in r["outcomes"]} - {"succeeded"}),
        "profile": "\n".join(r["profile"] for r in runs if "profile" in r),
    }
    if all("commits" in r for r in runs):
        s["commits_per_job"] = each(lambda r: per_job(r, r["commits"]["commits"]))
        s["write_commits_per_job"] = each(lambda r: per_job(r, r["commits"]["write_commits"]))
        s["rollbacks_per_job"] = each(lambda r: per_job(r, r["commits"]["rollbacks"]))
        s["pool_checkouts_per_job"] = each(lambda r: per_job(r, r["commits"]["checkouts"]))
        s["new_connections"] = each(lambda r: r["commits"]["connects"])
        s["stmt_ms_per_job"] = each(lambda r: per_job(r, r["commits"]["stmt_seconds"] * 1000))
        s["begin_ms_per_job"] = each(lambda r: per_job(r, r["commits"]["begin_seconds"] * 1000))
    if all("xact" in r for r in runs):
        s["xact_commit_per_job"] = each(lambda r: per_job(r, r["xact"]["commit"]))
        s["xact_rollback_per_job"] = each(lambda r: per_job(r, r["xact"]["rollback"]))
    if all(r.get("ticks") for r in runs):
        s["ticks_per_s"] = each(lambda r: len(r["ticks"]) / r["wall"])
        s["tick_p50_ms"] = each(lambda r: pct([t for t, _ in r["ticks"]], 0.5) * 1000)
        s["tick_p99_ms"] = each(lambda r: pct([t for t, _ in r["ticks"]], 0.99) * 1000)
        s["claimed_per_tick_p50"] = each(lambda r: pct([float(n) for _, n in r["ticks"]], 0.5))
        s["idle_ticks_share"] = each(lambda r: sum(n == 0 for _, n in r["ticks"]) / len(r["ticks"]))
    if all("history" in r for r in runs):
        s["history_rows_per_job"] = each(lambda r: per_job(r, sum(r["history"].values())))
        kinds = {k for r in runs for k in r["history"]}
        s["history_by_kind_per_job"] = {
            k: med([r["history"].get(k, 0) / jobs for r in runs]) for k in sorted(kinds)
        }
    return s


def ratio(a: dict[str, Any] | None, b: dict[str, Any] | None) -> float | None:
    if not a or not b:
        return None
    return float(a["jobs_per_s"] / b["jobs_per_s"])


def ratios(summary: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for db in ("sqlite", "postgres"):
        jg = summary.get(f"jobgate-{db}")
        out[f"jobgate/ceiling {db}"] = ratio(jg, summary.get("ceiling"))
        out[f"jobgate/dbos {db}"] = ratio(jg, summary.get(f"dbos-{db}"))
    return out


def fmt(v: Any, spec: str = ".1f") -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    return format(v, spec)


def print_report(result: dict[str, Any]) -> None:
    p = result["params"]
    summary: dict[str, dict[str, Any]] = result["summary"]
    print(
        f"end_to_end: {p['jobs']} jobs, {p['concurrency']} at a time, scenario slow "
        f"(polls: {POLLS}), polls {p['poll_ms']:g} ms apart (hint {p['hint_s']:g} s x time "
        f"scale {p['time_scale']:g}), warm-up {p['warmup']}, {p['rounds']} round(s), "
        f"{os.cpu_count()} cores"
    )
    client = p.get("client", "httpx")  # a --render of a run from before httpx2: all httpx
    if "client" in p:
        print(f"HTTP client of the ceiling, DBOS and jobgate's agents: {client}; gateway: httpx2")
    print(
        f"load average (1/5/15 min): before {result['load_before']}, after {result['load_after']}"
    )

    def cell(name: str) -> str:
        s = summary.get(name)
        return f"{s['jobs_per_s']:.1f} jobs/s" if s else "-"

    rows = [
        (
            f"a plain asyncio+{client} loop, no durability (the ceiling)",
            cell("ceiling"),
            "(no db)",
        ),
        ("DBOS Transact (durable workflow)", cell("dbos-sqlite"), cell("dbos-postgres")),
        (
            "jobgate (POST, then /wait; in-process observer)",
            cell("jobgate-sqlite"),
            cell("jobgate-postgres"),
        ),
    ]
    print(f"\n| {'who does the work':<58} | {'SQLite':>13} | {'PostgreSQL':>13} |")
    print(f"| {'-' * 58} | {'-' * 13} | {'-' * 13} |")
    for who, a, b in rows:
        print(f"| {who:<58} | {a:>13} | {b:>13} |")
    r = result["ratios"]
    print(f"\n{'ratios (same run)':<20} {'SQLite':>8} {'PostgreSQL':>11}")
    for what in ("jobgate/ceiling", "jobgate/dbos"):
        a, b = r[f"{what} sqlite"], r[f"{what} postgres"]
        print(f"{what:<20} {fmt(a, '.2f'):>8} {fmt(b, '.2f'):>11}")
    print(
        f"\n{'contender':<17}{'jobs/s':>7}{'lat p50':>8}{'p99':>7}{'1st poll':>9}{'gap p50':>8}"
        f"{'p99':>7}{'cpu ms/job':>11}{'commits/job':>12}{'xact/job':>9}{'hist/job':>9}"
        f"{'calls/job':>10}{'failed':>7}"
    )
    for name in CONTENDERS:
        s = summary.get(name)
        if not s:
            continue
        commits = (
            f"{s['commits_per_job']:.1f}/{s['write_commits_per_job']:.1f}"
            if "commits_per_job" in s
            else "-"
        )
        print(
            f"{name:<17}{fmt(s['jobs_per_s']):>7}{fmt(s['latency_p50_ms'], '.0f'):>8}"
            f"{fmt(s['latency_p99_ms'], '.0f'):>7}{fmt(s['first_poll_p50_ms'], '.0f'):>9}"
            f"{fmt(s['poll_gap_p50_ms'], '.0f'):>8}{fmt(s['poll_gap_p99_ms'], '.0f'):>7}"
            f"{fmt(s['cpu_ms_per_job']):>11}{commits:>12}"
            f"{fmt(s.get('xact_commit_per_job')):>9}{fmt(s.get('history_rows_per_job')):>9}"
            f"{fmt(s['provider_calls_per_job']):>10}{s['not_succeeded']:>7}"
        )
    for name, s in summary.items():
        extra = f"  {name}: run-queue wait {fmt(s.get('runq_ms_per_job'))} ms/job"
        extra += f", mock cpu {fmt(s.get('mock_cpu_ms_per_job'))} ms/job"
        agent_cpu = s.get("agent_cpu_ms_per_job")
        if agent_cpu is not None and agent_cpu == agent_cpu:  # measured (jobgate), not NaN
            extra += f", agents' cpu {fmt(s.get('agent_cpu_ms_per_job'))} ms/job"
        server_cpu = s.get("db_server_cpu_ms_per_job")
        if server_cpu is not None and server_cpu == server_cpu:
            extra += f", PostgreSQL server cpu {fmt(server_cpu)} ms/job"
        if "stmt_ms_per_job" in s:
            extra += f", SQL time {fmt(s['stmt_ms_per_job'], '.0f')} ms/job"
            extra += f" (BEGIN {fmt(s['begin_ms_per_job'], '.0f')})"
            extra += f", {fmt(s.get('new_connections'), '.0f')} new db connections"
        print(extra)
        if "history_by_kind_per_job" in s:
            kinds = ", ".join(f"{k} {v:.1f}" for k, v in s["history_by_kind_per_job"].items())
            print(f"  {name} history rows per job by kind: {kinds}")
        if "tick_p50_ms" in s:
            print(
                f"  {name} observer ticks: {s['ticks_per_s']:.1f}/s, length p50 "
                f"{s['tick_p50_ms']:.0f} ms p99 {s['tick_p99_ms']:.0f} ms, claimed p50 "
                f"{s['claimed_per_tick_p50']:.0f}, {s['idle_ticks_share'] * 100:.0f}% claimed none"
            )
        if s.get("profile"):
            print(s["profile"])
        if s["examples_not_succeeded"]:
            print(f"  {name} NOT succeeded: {s['examples_not_succeeded'][:3]}")
    print(
        "  commits/job: all/writing COMMITs in the working process; "
        "xact/job: pg_stat_database.xact_commit; cpu: the gateway (jobgate) or the worker"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=600)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=None, help="untimed jobs first (default: C)")
    ap.add_argument("--only", default=",".join(CONTENDERS), help="comma-separated contenders")
    ap.add_argument("--poll-ms", type=float, default=10.0, help="spacing of the status polls")
    ap.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead")
    ap.add_argument(
        "--client", choices=LIBRARIES, default=LIBRARIES[0],
        help="HTTP client library of the ceiling's and DBOS's provider calls and of jobgate's "
        "agents (the gateway itself always uses httpx2)",
    )  # fmt: skip
    ap.add_argument(
        "--py-spy", type=Path, default=None, metavar="DIR",
        help="profile the jobgate gateway with py-spy during the timed phase (slows it)",
    )  # fmt: skip
    ap.add_argument(
        "--gateway-env", action="append", default=[], metavar="JOBGATE_X=V",
        help="extra settings for the jobgate gateway (repeatable)",
    )  # fmt: skip
    ap.add_argument("--render", type=Path, default=None, help="print the table of a --json file")
    args = ap.parse_args()
    if args.render:
        text_ = args.render.read_text()
        print_report(json.loads(text_[text_.index("{") :]))
        return
    args.warmup = args.concurrency if args.warmup is None else args.warmup
    chosen = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = set(chosen) - set(CONTENDERS)
    if unknown:
        ap.error(f"unknown contenders {sorted(unknown)}; choose from {', '.join(CONTENDERS)}")
    if any(c.startswith("dbos") for c in chosen):
        try:
            import dbos  # noqa: F401
        except ImportError:
            ap.error("DBOS is not installed: pip install -e '.[dev,bench]' (or make bench-e2e)")

    first, lo, hi = mock_profile_first_delay()
    hint = first  # the mock's poll hint equals the profile's first delay: one spacing for all
    if not lo <= hint <= hi:
        raise SystemExit(f"the mock profile clamps hints to [{lo}, {hi}]; {hint} is outside")
    scale = args.poll_ms / 1000 / hint
    order = [c for c in CONTENDERS if c in chosen]
    runs: dict[str, list[dict[str, Any]]] = {c: [] for c in order}
    load_before = loadavg()
    for rnd in range(args.rounds):
        for name in order:
            if not args.json:
                print(f"  round {rnd + 1}/{args.rounds}: {name} ...", file=sys.stderr, flush=True)
            with tempfile.TemporaryDirectory(prefix=f"jobgate-e2e-{name}-") as tmp:
                runner = run_jobgate if name.startswith("jobgate") else run_external
                runs[name].append(runner(name, args, Path(tmp), scale, first))
    result: dict[str, Any] = {
        "params": {
            "jobs": args.jobs,
            "concurrency": args.concurrency,
            "rounds": args.rounds,
            "warmup": args.warmup,
            "poll_ms": args.poll_ms,
            "hint_s": hint,
            "time_scale": scale,
            "gateway_env": args.gateway_env,
            "client": args.client,
        },
        "load_before": load_before,
        "load_after": loadavg(),
        "summary": {name: summarize(rs, args.jobs) for name, rs in runs.items()},
    }
    result["ratios"] = ratios(result["summary"])
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_report(result)


if __name__ == "__main__":
    main()
