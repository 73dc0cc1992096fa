"""The mock provider's small persistent state: jobs, create calls per token, a per-job call log.

This is the mock's private SQLite file (not jobgate's database), so it creates its
own tables. One connection guarded by a lock serves every thread; each call that
reads counters and then writes runs in one `BEGIN IMMEDIATE` transaction so the
decision it makes (e.g. "is this the token's first create?") cannot race.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from jobgate_fakes.mock import listing
from jobgate_fakes.mock.scenarios import CreateDecision

T = TypeVar("T")
JobOp = Literal["status", "cancel", "result"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL UNIQUE,
    token TEXT NOT NULL,
    client_reference TEXT,
    kind TEXT NOT NULL,
    trace_id TEXT,
    scenario TEXT NOT NULL,
    state TEXT NOT NULL,
    completed INTEGER NOT NULL,
    total INTEGER NOT NULL,
    status_calls INTEGER NOT NULL DEFAULT 0,
    cancel_calls INTEGER NOT NULL DEFAULT 0,
    result_calls INTEGER NOT NULL DEFAULT 0,
    webhooks_sent INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    metadata TEXT,
    list_delay INTEGER NOT NULL DEFAULT 0,
    list_seen INTEGER NOT NULL DEFAULT 0,
    create_body TEXT
);
CREATE INDEX IF NOT EXISTS jobs_by_token ON jobs (token, seq);
CREATE INDEX IF NOT EXISTS jobs_by_client_reference ON jobs (client_reference, seq);
CREATE TABLE IF NOT EXISTS creates (token TEXT PRIMARY KEY, calls INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS refused (client_reference TEXT PRIMARY KEY, calls INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    at TEXT NOT NULL,
    op TEXT NOT NULL,
    worker TEXT,
    trace_id TEXT
);
CREATE INDEX IF NOT EXISTS calls_by_job ON calls (job_id, id);
"""
# Columns added after the first release: a state file written before them gets them here.
_ADDED_COLUMNS = {
    "metadata": "TEXT",
    "list_delay": "INTEGER NOT NULL DEFAULT 0",
    "list_seen": "INTEGER NOT NULL DEFAULT 0",
    "create_body": "TEXT",
}


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass(frozen=True)
class JobRecord:
    """One stored job, as read inside the transaction of the call that read it."""

    job_id: str
    token: str
    client_reference: str | None
    kind: str
    trace_id: str | None
    scenario: dict[str, Any]
    state: str
    completed: int
    total: int
    status_calls: int
    cancel_calls: int
    result_calls: int
    webhooks_sent: int
    created_at: str
    updated_at: str
    metadata: dict[str, Any] | None = None
    list_delay: int = 0  # listings that leave this job out before it shows
    list_seen: int = 0  # listings that have left it out so far

    @property
    def progress(self) -> tuple[int, int]:
        """`(completed, total)`."""
        return (self.completed, self.total)


@dataclass(frozen=True)
class NewJob:
    """What a create call would store if it decides to make a job."""

    kind: str
    scenario: dict[str, Any]
    client_reference: str | None
    trace_id: str | None
    state: str
    progress: tuple[int, int]
    metadata: dict[str, Any] | None = None
    list_delay: int = 0
    create_body: dict[str, Any] | None = None  # the create request's JSON body, as received


@dataclass(frozen=True)
class JobUpdate:
    """A new state and progress for a job."""

    state: str
    progress: tuple[int, int]


_COLUMNS = ", ".join(JobRecord.__dataclass_fields__)


def _job(row: sqlite3.Row) -> JobRecord:
    values = dict(row)
    values["scenario"] = json.loads(values["scenario"])
    values["metadata"] = json.loads(values["metadata"]) if values["metadata"] else None
    return JobRecord(**values)


class MockStore:
    """Thread-safe access to the mock's SQLite state; the connection opens lazily."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            if self._path != ":memory:":
                Path(self._path).parent.mkdir(parents=True, exist_ok=True)
            # Autocommit mode: transactions are opened explicitly with BEGIN IMMEDIATE.
            conn = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL makes this crash-safe enough
            conn.execute("PRAGMA busy_timeout=5000")
            conn.executescript(_SCHEMA)
            have = {r["name"] for r in conn.execute("PRAGMA table_info(jobs)")}
            for name, decl in _ADDED_COLUMNS.items():
                if name not in have:
                    conn.execute(f"ALTER TABLE jobs ADD COLUMN {name} {decl}")
            self._conn = conn
        return self._conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close the connection (a later call reopens it; `:memory:` state is then lost)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def reset(self) -> None:
        """Forget every job, counter and logged call."""
        with self._tx() as conn:
            conn.execute("DELETE FROM jobs")
            conn.execute("DELETE FROM creates")
            conn.execute("DELETE FROM refused")
            conn.execute("DELETE FROM calls")

    def refuse_create(self, client_reference: str | None, times: int) -> bool:
        """Whether this create is refused as overloaded (nothing made): the first `times`
        create calls carrying this client reference are; each one is counted."""
        if times <= 0 or client_reference is None:
            return False
        with self._tx() as conn:
            row = conn.execute(
                "SELECT calls FROM refused WHERE client_reference = ?", (client_reference,)
            ).fetchone()
            if row is not None and row["calls"] >= times:
                return False
            conn.execute(
                "INSERT INTO refused (client_reference, calls) VALUES (?, 1) "
                "ON CONFLICT(client_reference) DO UPDATE SET calls = calls + 1",
                (client_reference,),
            )
        return True

    def create_call(
        self,
        token: str | None,
        decide: Callable[[int], CreateDecision],
        new_job: NewJob,
        worker: str | None,
        trace_id: str | None = None,
        *,
        idempotent: bool = True,
    ) -> tuple[CreateDecision, JobRecord | None]:
        """Count a create call for `token`, let `decide(earlier_jobs)` choose, and apply
        it atomically: action "new" stores `new_job`, "existing" answers with the token's
        latest job, "none" stores nothing. Returns the decision and the job.

        Idempotent, `earlier_jobs` counts the token's jobs; otherwise (no token, or
        a scenario that ignores it) it counts the client reference's jobs. A create
        without a token is filed under a fresh `untokened_...` token of its own."""
        token = token or "untokened_" + secrets.token_hex(8)
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO creates (token, calls) VALUES (?, 1) "
                "ON CONFLICT(token) DO UPDATE SET calls = calls + 1",
                (token,),
            )
            column = "token" if idempotent else "client_reference"
            arg = token if idempotent else new_job.client_reference
            (count,) = conn.execute(
                f"SELECT COUNT(*) FROM jobs WHERE {column} = ?", (arg,)
            ).fetchone()
            decision = decide(int(count))
            action = decision.action
            job_id: str | None = None
            if action == "new":
                job_id = "job_" + secrets.token_hex(12)
                now = _now()
                conn.execute(
                    "INSERT INTO jobs (job_id, token, client_reference, kind, trace_id, scenario,"
                    " state, completed, total, created_at, updated_at, metadata, list_delay,"
                    " create_body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        job_id,
                        token,
                        new_job.client_reference,
                        new_job.kind,
                        new_job.trace_id,
                        json.dumps(new_job.scenario),
                        new_job.state,
                        *new_job.progress,
                        now,
                        now,
                        json.dumps(new_job.metadata) if new_job.metadata is not None else None,
                        new_job.list_delay,
                        json.dumps(new_job.create_body) if new_job.create_body else None,
                    ),
                )
            elif action == "existing":
                row = conn.execute(
                    "SELECT job_id FROM jobs WHERE token = ? ORDER BY seq DESC LIMIT 1", (token,)
                ).fetchone()
                job_id = row["job_id"] if row else None
            if job_id is None:
                return decision, None
            self._log(conn, job_id, "create", worker, trace_id)
            return decision, self._get(conn, job_id)

    def job_call(
        self,
        job_id: str,
        op: JobOp,
        decide: Callable[[JobRecord], tuple[T, JobUpdate | None]],
        worker: str | None = None,
        trace_id: str | None = None,
    ) -> tuple[JobRecord, T, JobRecord] | None:
        """Count and log an `op` call on a job, then let `decide(job)` (which sees the
        incremented counter) choose the answer and an optional update, applied atomically.
        Returns the job as `decide` saw it, the answer, and the job after the update;
        None for an unknown job."""
        with self._tx() as conn:
            # The column name comes from a closed Literal, never from user input.
            cur = conn.execute(
                f"UPDATE jobs SET {op}_calls = {op}_calls + 1 WHERE job_id = ?", (job_id,)
            )
            if cur.rowcount == 0:
                return None
            self._log(conn, job_id, op, worker, trace_id)
            job = self._get(conn, job_id)
            answer, update = decide(job)
            if update is not None and (update.state, update.progress) != (job.state, job.progress):
                conn.execute(
                    "UPDATE jobs SET state = ?, completed = ?, total = ?, updated_at = ?"
                    " WHERE job_id = ?",
                    (update.state, *update.progress, _now(), job_id),
                )
                return job, answer, self._get(conn, job_id)
            return job, answer, job

    def get_job(self, job_id: str) -> JobRecord | None:
        """One job, or None."""
        with self._lock:
            row = (
                self._connect()
                .execute(f"SELECT {_COLUMNS} FROM jobs WHERE job_id = ?", (job_id,))
                .fetchone()
            )
        return _job(row) if row else None

    def lookup(
        self, idempotency_key: str | None, client_reference: str | None
    ) -> list[dict[str, Any]]:
        """Jobs matching every given filter, oldest first (see `listing.filtered`)."""
        with self._tx() as conn:
            return listing.filtered(conn, idempotency_key, client_reference)

    def page(self, *, limit: int, before_seq: int | None) -> listing.Page:
        """One page of the newest-first listing (see `listing.page`)."""
        with self._tx() as conn:
            return listing.page(conn, limit, before_seq)

    def seq_of(self, job_id: str) -> int | None:
        """The listing position of a job (for `after=<job id>`), or None."""
        with self._lock:
            row = self._connect().execute("SELECT seq FROM jobs WHERE job_id = ?", (job_id,))
            found = row.fetchone()
        return int(found["seq"]) if found else None

    def stats(
        self, token: str | None = None, client_reference: str | None = None
    ) -> dict[str, Any]:
        """The `/_mock/stats` body, optionally limited to one token and/or client reference.

        `jobs_by_reference` groups jobs by the client reference sent on create: a
        caller that retried under a NEW token still shows two jobs for one reference.
        """
        conds, args = listing.conditions(token, client_reference)
        where = f"WHERE {' OR '.join(conds)}" if conds else ""
        with self._lock:
            conn = self._connect()
            jobs = conn.execute(
                "SELECT job_id, token, client_reference, state, status_calls, cancel_calls,"
                f" result_calls, webhooks_sent FROM jobs {where} ORDER BY seq",
                args,
            ).fetchall()
            tokens = {j["token"] for j in jobs} | ({token} if token is not None else set())
            if conds:
                marks = ",".join("?" * len(tokens))
                creates = conn.execute(
                    f"SELECT token, calls FROM creates WHERE token IN ({marks})", sorted(tokens)
                ).fetchall()
            else:
                creates = conn.execute("SELECT token, calls FROM creates").fetchall()
            # Refused creates made no job, so only a reference (or no filter) finds them.
            refused = conn.execute(
                "SELECT client_reference, calls FROM refused"
                + (" WHERE client_reference = ?" if conds else ""),
                (client_reference,) if conds else (),
            ).fetchall()
        jobs_by_token: dict[str, list[str]] = {}
        jobs_by_reference: dict[str, list[str]] = {}
        for j in jobs:
            jobs_by_token.setdefault(j["token"], []).append(j["job_id"])
            if j["client_reference"] is not None:
                jobs_by_reference.setdefault(j["client_reference"], []).append(j["job_id"])
        return {
            "creates_by_token": {r["token"]: r["calls"] for r in creates},
            "refused_by_reference": {r["client_reference"]: r["calls"] for r in refused},
            "jobs_by_token": jobs_by_token,
            "jobs_by_reference": jobs_by_reference,
            "jobs": {
                j["job_id"]: {
                    "status_calls": j["status_calls"],
                    "cancel_calls": j["cancel_calls"],
                    "result_calls": j["result_calls"],
                    "state": j["state"],
                    "token": j["token"],
                    "client_reference": j["client_reference"],
                }
                for j in jobs
            },
            "webhooks_sent": sum(j["webhooks_sent"] for j in jobs),
        }

    def create_body(self, job_id: str) -> dict[str, Any] | None:
        """The JSON body of the create call that made the job (None: no such job)."""
        with self._lock:
            row = (
                self._connect()
                .execute("SELECT create_body FROM jobs WHERE job_id = ?", (job_id,))
                .fetchone()
            )
        if row is None or row["create_body"] is None:
            return None
        found = json.loads(row["create_body"])
        return found if isinstance(found, dict) else None

    def calls(self, job_id: str) -> list[dict[str, Any]]:
        """The call log of one job, oldest first: `{at, op, worker, trace_id}`."""
        with self._lock:
            rows = (
                self._connect()
                .execute(
                    "SELECT at, op, worker, trace_id FROM calls WHERE job_id = ? ORDER BY id",
                    (job_id,),
                )
                .fetchall()
            )
        return [dict(r) for r in rows]

    def count_webhook_sent(self, job_id: str) -> None:
        """Record one delivered webhook for a job."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE jobs SET webhooks_sent = webhooks_sent + 1 WHERE job_id = ?", (job_id,)
            )

    @staticmethod
    def _log(
        conn: sqlite3.Connection, job_id: str, op: str, worker: str | None, trace_id: str | None
    ) -> None:
        conn.execute(
            "INSERT INTO calls (job_id, at, op, worker, trace_id) VALUES (?, ?, ?, ?, ?)",
            (job_id, _now(), op, worker, trace_id),
        )

    @staticmethod
    def _get(conn: sqlite3.Connection, job_id: str) -> JobRecord:
        row = conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
        return _job(row)
