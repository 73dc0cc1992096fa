"""Measuring probes shared by `bench/end_to_end.py` and its worker processes.

- `cpu_seconds(pid)`: user + system CPU of a process, from `/proc/<pid>/stat`.
- `postgres_cpu_seconds()`: user + system CPU of the PostgreSQL server's processes.
- `runq_wait_seconds(pid)`: time the process's threads spent runnable but waiting for a
  CPU (`/proc/<pid>/task/*/schedstat`): how much the rest of the machine held it back.
- `pg_xact(admin_url, db)`: `pg_stat_database.xact_commit` / `xact_rollback` of one
  database, read from another database so the read itself is not counted.
  PostgreSQL 15 publishes a backend's counts when it goes idle (at most once a
  second) or exits, so read them after a pause, or after the client has closed.
- `CommitCounter`: counts, in the process it is installed in, every COMMIT and
  ROLLBACK of a jobgate transaction (a probe in `app.core.db.txn.PROBES`) or issued by
  SQLAlchemy on any engine (DBOS), and the commits whose transaction ran an INSERT,
  UPDATE or DELETE ("write commits"). It is how commits are counted on SQLite, where
  the database keeps no such counter; on PostgreSQL it is checked against
  `xact_commit`. It only adds listeners (a counter increment and a prefix test per
  statement); no jobgate code changes. It also sums the time
  statements took as seen by SQLAlchemy (including waiting for the event loop), and
  separately that of `BEGIN ...` statements: on SQLite, where jobgate begins every
  transaction with BEGIN IMMEDIATE, that is the time spent queueing for the write lock.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path
from typing import Any

CLK_TCK = os.sysconf("SC_CLK_TCK")
_WRITE = re.compile(r"\s*(?:WITH\b.*?\)\s*)?(INSERT|UPDATE|DELETE|REPLACE)\b", re.I | re.S)


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process in seconds (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def postgres_cpu_seconds() -> float:
    """utime + stime of every PostgreSQL server process alive now (the server shares the
    machine's cores with the contender; a backend that exits takes its time with it)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            raw = stat.read_text()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        name, rest = raw.split("(", 1)[1].rsplit(")", 1)
        if name == "postgres":
            fields = rest.split()
            total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


def runq_wait_seconds(pid: int) -> float:
    """Seconds the threads of `pid` now alive have waited on a run queue (Linux schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue  # a thread that just ended
    return total / 1e9


def pg_xact(admin_url: str, db: str) -> tuple[int, int]:
    """(xact_commit, xact_rollback) of database `db`, as PostgreSQL last published them."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = %s", (db,)
        ).fetchone()
    assert row is not None, db
    return int(row[0]), int(row[1])


class CommitCounter:
    """COMMITs and ROLLBACKs issued through SQLAlchemy in this process (all engines)."""

    def __init__(self) -> None:
        self.commits = 0
        self.write_commits = 0
        self.rollbacks = 0
        self.checkouts = 0  # connections taken from a pool (each pre-pinged, where enabled)
        self.connects = 0  # new database connections opened by a pool
        self.stmt_seconds = 0.0  # time in cursor.execute as SQLAlchemy saw it, summed
        self.begin_seconds = 0.0  # of which in `BEGIN ...` statements (SQLite: write lock)
        self.seq = 0

    def install(self) -> CommitCounter:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine
        from sqlalchemy.pool import Pool

        def before_execute(conn: Any, _cur: Any, stmt: str, *_: Any) -> None:
            if _WRITE.match(stmt):
                conn.info["e2e_wrote"] = True
            conn.info["e2e_t0"] = time.perf_counter()

        def after_execute(conn: Any, _cur: Any, stmt: str, *_: Any) -> None:
            t0 = conn.info.pop("e2e_t0", None)
            if t0 is None:
                return
            dt = time.perf_counter() - t0
            self.stmt_seconds += dt
            if stmt.lstrip()[:5].upper() == "BEGIN":
                self.begin_seconds += dt

        def on_commit(conn: Any) -> None:
            self.commits += 1
            if conn.info.pop("e2e_wrote", False):
                self.write_commits += 1

        def on_rollback(conn: Any) -> None:
            self.rollbacks += 1
            conn.info.pop("e2e_wrote", None)

        event.listen(Engine, "before_cursor_execute", before_execute)
        event.listen(Engine, "after_cursor_execute", after_execute)
        event.listen(Engine, "commit", on_commit)

        def on_checkout(*_: Any) -> None:
            self.checkouts += 1

        event.listen(Engine, "rollback", on_rollback)

        def on_connect(*_: Any) -> None:
            self.connects += 1

        event.listen(Pool, "checkout", on_checkout)
        event.listen(Pool, "connect", on_connect)
        self._install_jobgate()
        return self

    def _install_jobgate(self) -> None:
        """The same counts for jobgate's own transactions (app/core/db/txn.py)."""
        try:
            from app.core.db import txn
        except ImportError:  # a worker without jobgate on its path
            return
        counter = self

        class Probe(txn.Probe):
            def statement(self, _t: Any, sql: str, _args: Any, seconds: float) -> None:
                counter.stmt_seconds += seconds
                if sql[:5].upper() == "BEGIN":
                    counter.begin_seconds += seconds

            def commit(self, t: Any) -> None:
                counter.commits += 1
                counter.write_commits += bool(t.wrote)
                counter.checkouts += 1  # one pooled connection per transaction

            def rollback(self, _t: Any) -> None:
                counter.rollbacks += 1
                counter.checkouts += 1

            def connected(self) -> None:
                counter.connects += 1

        txn.PROBES.append(Probe())

    def snapshot(self) -> dict[str, float]:
        return {
            "commits": self.commits,
            "write_commits": self.write_commits,
            "rollbacks": self.rollbacks,
            "checkouts": self.checkouts,
            "connects": self.connects,
            "stmt_seconds": self.stmt_seconds,
            "begin_seconds": self.begin_seconds,
        }

    def dump_on_signal(self, path: Path, signum: int = signal.SIGUSR1) -> None:
        """On `signum`, write the counts (and a sequence number) to `path`, atomically."""

        def handler(_sig: int, _frame: Any) -> None:
            self.seq += 1
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"seq": self.seq, **self.snapshot()}))
            tmp.replace(path)

        signal.signal(signum, handler)
