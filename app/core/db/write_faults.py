"""What a failed write means, in the words an agent can act on.

Infrastructure faults are not the gateway's bugs and must not read as one (a bare
`500 internal_error`): storage with no room left (`507 storage_full`), a database that
did not answer within its bound (`503 database_busy`: a lock another process holds) and
a database that cannot be reached (`503 database_unavailable`). Each says when to try
again (`Retry-After`) and what is known of the call (app/core/http/fault_words.py), and
each keeps the connection open. The driver errors are told apart by their public marks:
errno, SQLite's result code, PostgreSQL's SQLSTATE, a connection the driver lost
(docs/operations.md, "When storage or the database fails").
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator

import asyncpg
from sqlalchemy.exc import DBAPIError

RETRY_AFTER_SECONDS = 30

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_GONE_ERRNOS = {
    errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.EHOSTUNREACH,
    errno.ENETUNREACH, errno.ETIMEDOUT, errno.EPIPE,
}  # fmt: skip
# PostgreSQL's SQLSTATEs. 53100 disk_full.
_FULL_SQLSTATES = {"53100"}
# 55P03 lock_not_available (lock_timeout), 57014 query_canceled (statement_timeout),
# 40001 serialization_failure, 40P01 deadlock_detected, 53200 out_of_memory: the same
# call succeeds later.
_BUSY_SQLSTATES = {"55P03", "57014", "40001", "40P01", "53200"}
# Class 08 connection exceptions; 57P01-05 shutdown, crash, cannot connect now, database
# dropped, idle session timeout; 53300 too many connections; 25P03 the session was ended
# for idling in a transaction.
_GONE_SQLSTATE_PREFIXES = ("08", "57P0", "53300", "25P03")
# SQLite's primary result codes (the low byte of an extended one).
_SQLITE_FULL = {sqlite3.SQLITE_FULL}
_SQLITE_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM,
                sqlite3.SQLITE_INTERRUPT, sqlite3.SQLITE_PROTOCOL}  # fmt: skip
_SQLITE_GONE = {sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY,
                sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_PERM,
                sqlite3.SQLITE_AUTH, sqlite3.SQLITE_NOLFS}  # fmt: skip


class Unreachable(ConnectionError):
    """A connection to the database could not be opened (refused, timed out, the server
    not accepting connections, a login refused): raised by the pool's opener."""


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
        if isinstance(current, BaseExceptionGroup):  # a task group's failures
            todo += list(current.exceptions)


def kind_of(exc: BaseException) -> str | None:
    """`storage_full`, `database_busy`, `database_unavailable`, or None: a bug.

    The one classification of a database failure, for the HTTP answer, the MCP tools and
    the observer's writes alike (docs/operations.md, "When storage or the database
    fails"). The first mark found on the chain decides."""
    for e in _chain(exc):
        kind = _kind_of_one(e)
        if kind is not None:
            return kind
    return None


def _kind_of_one(e: BaseException) -> str | None:
    state = getattr(e, "sqlstate", None)
    if isinstance(state, str) and state:
        if state in _FULL_SQLSTATES:
            return "storage_full"
        if state in _BUSY_SQLSTATES:
            return "database_busy"
        if state.startswith(_GONE_SQLSTATE_PREFIXES):
            return "database_unavailable"
    if isinstance(e, DBAPIError) and e.connection_invalidated:
        # The driver lost the connection under the statement (app/core/db/drivers/
        # pg_conn.py: a backend terminated, "connection is closed", a state switch).
        return "database_unavailable"
    if isinstance(e, asyncpg.InternalClientError | asyncpg.ClientCannotConnectError):
        # "cannot switch to state ...": the protocol lost its connection mid-call.
        return "database_unavailable"
    if isinstance(e, sqlite3.Error):
        code = getattr(e, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        if primary in _SQLITE_FULL or "database or disk is full" in str(e):
            return "storage_full"
        if primary in _SQLITE_BUSY or "database is locked" in str(e):
            return "database_busy"
        if primary in _SQLITE_GONE:
            return "database_unavailable"
    if isinstance(e, OSError):
        if e.errno in _FULL_ERRNOS:
            return "storage_full"
        if e.errno in _GONE_ERRNOS or isinstance(e, ConnectionError):
            return "database_unavailable"
    return None
