"""The mock's job listings, only eventually consistent on purpose.

A filtered lookup (by token or client reference, oldest first) and the unfiltered
listing (newest first, in pages). A job created with `list_delay: N` is left out of
the first N listings that reach it, each pass counted in `list_seen`: driven by
request counts, never by wall time. Runs inside the store's write transaction.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

MAX_PAGE = 100  # the largest listing page the mock serves
_BATCH = 200  # rows read at a time while filling a page
_COLUMNS = "seq, job_id, state, created_at, metadata, list_delay, list_seen"


@dataclass(frozen=True)
class Page:
    """One page of the unfiltered listing, newest first."""

    jobs: list[dict[str, Any]]
    next_cursor: str | None  # pass back as `cursor` for the next page; None on the last

    @property
    def last_id(self) -> str | None:
        return self.jobs[-1]["job_id"] if self.jobs else None


def listed(row: sqlite3.Row) -> dict[str, Any]:
    """A job as a listing shows it."""
    return {
        "job_id": row["job_id"],
        "state": row["state"],
        "created_at": row["created_at"],
        "metadata": json.loads(row["metadata"]) if row["metadata"] else {},
    }


def shows(conn: sqlite3.Connection, row: sqlite3.Row) -> bool:
    """Whether a listing shows this job now; a pass while it is hidden is counted."""
    if row["list_seen"] >= row["list_delay"]:
        return True
    conn.execute("UPDATE jobs SET list_seen = list_seen + 1 WHERE seq = ?", (row["seq"],))
    return False


def conditions(token: str | None, client_reference: str | None) -> tuple[list[str], list[str]]:
    """SQL conditions (and their arguments) for the filters that are given."""
    given = [("token = ?", token), ("client_reference = ?", client_reference)]
    return [c for c, v in given if v is not None], [v for _, v in given if v is not None]


def filtered(
    conn: sqlite3.Connection, idempotency_key: str | None, client_reference: str | None
) -> list[dict[str, Any]]:
    """Jobs matching every given filter, oldest first; hidden ones left out."""
    where, args = conditions(idempotency_key, client_reference)
    sql = f"SELECT {_COLUMNS} FROM jobs"
    if where:
        sql += " WHERE " + " AND ".join(where)
    rows = conn.execute(sql + " ORDER BY seq", args).fetchall()
    return [listed(r) for r in rows if shows(conn, r)]


def page(conn: sqlite3.Connection, limit: int, before_seq: int | None) -> Page:
    """Up to `limit` jobs older than `before_seq`, newest first. A hidden job is passed
    over (and the pass counted) without taking a place on the page."""
    limit = max(1, min(limit, MAX_PAGE))
    jobs: list[dict[str, Any]] = []
    last_seq = before_seq
    while len(jobs) < limit:
        cond, args = ("WHERE seq < ?", [last_seq]) if last_seq is not None else ("", [])
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM jobs {cond} ORDER BY seq DESC LIMIT {_BATCH}", args
        ).fetchall()
        for row in rows:
            last_seq = row["seq"]
            if shows(conn, row):
                jobs.append(listed(row))
                if len(jobs) == limit:
                    break
        if len(rows) < _BATCH:
            break
    more = (
        last_seq is not None
        and conn.execute("SELECT 1 FROM jobs WHERE seq < ? LIMIT 1", (last_seq,)).fetchone()
    )
    return Page(jobs, f"s{last_seq}" if more else None)
