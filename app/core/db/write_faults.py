"""What a failed write means, in the words an agent can act on.

Infrastructure faults are not the gateway's bugs and must not read as one (a bare
`500 internal_error`): storage with no room left (`507 storage_full`), a database that
did not answer within its bound (`503 database_busy`: a lock another process holds) and
a database that cannot be reached (`503 database_unavailable`). Both say that nothing was written
and when to try again (`Retry-After`), and both keep the connection open. The driver
errors are told apart by their public marks: errno, SQLite's result code, PostgreSQL's
SQLSTATE (docs/operations.md, "When storage or the database fails").
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator

RETRY_AFTER_SECONDS = 30

STORAGE_FULL_MESSAGE = (
    "NOT started: the gateway's storage is full, so nothing was recorded and no provider "
    "was called. Retry after {retry} seconds with the same Idempotency-Key."
)
DATABASE_BUSY_MESSAGE = (
    "NOT done: the gateway's database did not answer within its bound (a lock held by "
    "another process, or a statement too long), so nothing was recorded. Retry after "
    "{retry} seconds; a create with the same Idempotency-Key."
)
DATABASE_GONE_MESSAGE = (
    "NOT started: the gateway cannot reach its database, so nothing was recorded and no "
    "provider was called. Retry after {retry} seconds with the same Idempotency-Key."
)

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_GONE_ERRNOS = {errno.ECONNREFUSED, errno.ECONNRESET, errno.EHOSTUNREACH, errno.ETIMEDOUT}
# PostgreSQL: class 53 disk_full; class 08 connection exceptions, 57P01-03 shutdown.
_FULL_SQLSTATES = {"53100"}
# 55P03 lock_not_available (lock_timeout), 57014 query_canceled (statement_timeout).
_BUSY_SQLSTATES = {"55P03", "57014"}
_GONE_SQLSTATE_PREFIXES = ("08", "57P01", "57P02", "57P03")


class StorageFull(OSError):
    """Refused before writing: the bytes would not fit beside the configured reserve."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.ENOSPC, message)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception, what it wraps (`orig`, cause, context), without looping."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [getattr(current, "orig", None), current.__cause__, current.__context__]


def kind_of(exc: BaseException) -> str | None:
    """`storage_full`, `database_busy`, `database_unavailable`, or None for anything else."""
    for e in _chain(exc):
        state = getattr(e, "sqlstate", None)
        if isinstance(state, str):
            if state in _FULL_SQLSTATES:
                return "storage_full"
            if state in _BUSY_SQLSTATES:
                return "database_busy"
            if state.startswith(_GONE_SQLSTATE_PREFIXES):
                return "database_unavailable"
        if isinstance(e, sqlite3.Error):
            code = getattr(e, "sqlite_errorcode", None)
            if code == sqlite3.SQLITE_FULL or "database or disk is full" in str(e):
                return "storage_full"
            if code == sqlite3.SQLITE_CANTOPEN:
                return "database_unavailable"
        if isinstance(e, OSError):
            if e.errno in _FULL_ERRNOS:
                return "storage_full"
            if e.errno in _GONE_ERRNOS or isinstance(e, ConnectionError):
                return "database_unavailable"
    return None
