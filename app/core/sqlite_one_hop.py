"""SQLite statements with as few trips to aiosqlite's thread as can wait on a lock.

SQLAlchemy's aiosqlite adapter makes a separate trip to the driver's thread to
open a cursor, to execute, to fetch the rows and to close the cursor, and one more
to roll back a connection going back to the pool even when its transaction has
already committed. Each trip is a future, a wake-up of the event loop and two
greenlet switches; under load they were a quarter of the gateway's CPU.

Here only what can wait goes to the thread: `BEGIN IMMEDIATE` while another
connection holds the write lock (it waits for it, up to the busy timeout; a free
lock is taken at once on the loop, see `_lock_now`), a statement outside any
transaction, and every `CHECKPOINT_EVERY`-th writing COMMIT of a connection, which
checkpoints the WAL after it (a checkpoint may fsync; the connections make no
automatic ones). Everything else runs at once in the caller's thread: a statement
inside a transaction that already holds its lock, a plain `BEGIN`, and a COMMIT (in
WAL mode none of them waits for anybody; without WAL, every statement takes the
trip). A statement in the thread is one trip (cursor, execute, rows, counts and
close together); a rollback with nothing open makes none.

The adapted connection's class is swapped when the engine connects
(`install`); nothing else changes: same driver, same SQL, same transactions. It
reaches aiosqlite's thread through `Connection._execute` and `_conn`, present
from aiosqlite 0.17 to today's 0.22; if they are missing, `install` leaves the
stock adapter in place. Running in the caller's thread needs the connection opened
with `check_same_thread=False` (SQLAlchemy's default for a database file); without
it, every statement takes the trip.
"""

from __future__ import annotations

import collections
import sqlite3
from typing import Any

from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
)
from sqlalchemy.util import EMPTY_DICT
from sqlalchemy.util.concurrency import await_


class OneHopCursor(AsyncAdapt_aiosqlite_cursor):
    """A cursor whose statement runs whole in one go: on the loop, or in one trip."""

    __slots__ = ("_description", "_rowcount", "_lastrowid")

    def __init__(self, adapt_connection: Any) -> None:  # no trip: nothing is opened yet
        self._adapt_connection = adapt_connection
        self._connection = adapt_connection._connection
        self._cursor = None  # type: ignore[assignment]
        self._soft_closed_memoized = EMPTY_DICT
        self._rows = collections.deque()
        self._description: Any = None
        self._rowcount = -1
        self._lastrowid: Any = None

    @property
    def description(self) -> Any:
        return self._description

    @property
    def rowcount(self) -> int:
        return self._rowcount

    @property
    def lastrowid(self) -> Any:
        return self._lastrowid

    def _run(self, many: bool, operation: Any, parameters: Any) -> Any:
        """In the driver's thread: the statement, its rows and counts, the cursor closed."""
        cur = self._connection._conn.cursor()
        try:
            if many:
                cur.executemany(operation, parameters)
            else:
                cur.execute(operation, () if parameters is None else parameters)
            desc = cur.description
            rows = cur.fetchall() if desc else None
            return desc, rows, cur.rowcount, cur.lastrowid
        finally:
            cur.close()

    async def _one_trip(self, many: bool, operation: Any, parameters: Any) -> None:
        driver = self._connection
        async with self._adapt_connection._execute_mutex:
            if operation == BEGIN_IMMEDIATE and driver._jobgate_inline and _lock_now(driver):
                driver._jobgate_wrote = True
                desc, rows, rowcount, lastrowid = None, None, -1, None
            elif _waits(driver, operation):
                desc, rows, rowcount, lastrowid = await driver._execute(
                    self._run, many, operation, parameters
                )
                if operation == BEGIN_IMMEDIATE:
                    driver._jobgate_wrote = True
            else:
                desc, rows, rowcount, lastrowid = self._run(many, operation, parameters)
        self._description, self._rowcount, self._lastrowid = desc, rowcount, lastrowid
        self._rows = collections.deque(rows or ())

    def execute(self, operation: Any, parameters: Any = None) -> Any:
        try:
            return await_(self._one_trip(False, operation, parameters))
        except Exception as error:
            self._adapt_connection._handle_exception(error)

    def executemany(self, operation: Any, seq_of_parameters: Any) -> Any:
        try:
            return await_(self._one_trip(True, operation, seq_of_parameters))
        except Exception as error:
            self._adapt_connection._handle_exception(error)

    async def _async_soft_close(self) -> None:  # closed already, in its trip
        return None

    def close(self) -> None:
        self._rows.clear()


BEGIN_IMMEDIATE = "BEGIN IMMEDIATE"


def _lock_now(driver: Any) -> bool:
    """`BEGIN IMMEDIATE` on the loop if the write lock is free this instant; False (and
    nothing begun) if another connection holds it, to wait for it in the thread.

    With the busy timeout at 0 for that one statement, SQLite answers SQLITE_BUSY at
    once instead of sleeping in the caller's thread, which here is the event loop's.
    """
    conn = driver._conn
    conn.execute("PRAGMA busy_timeout=0")
    try:
        conn.execute(BEGIN_IMMEDIATE)
        return True
    except sqlite3.OperationalError as err:
        if getattr(err, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY:
            return False
        raise
    finally:
        conn.execute(f"PRAGMA busy_timeout={driver._jobgate_busy_ms}")


def _waits(driver: Any, operation: str) -> bool:
    """Whether this statement may wait on a lock (or the connection is thread-bound)."""
    if not driver._jobgate_inline:
        return True
    if driver._conn.in_transaction:
        return False  # it holds what it needs: in WAL mode its reads and writes wait for nobody
    return operation != "BEGIN"  # a deferred BEGIN takes no lock


class OneHopConnection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()

    _cursor_cls = OneHopCursor

    def commit(self) -> None:
        """COMMIT at once on the loop: in WAL mode it waits for nobody. Every
        `CHECKPOINT_EVERY`-th writing commit goes to the driver's thread instead, with
        a checkpoint after it (this connection makes none on its own: it could fsync)."""
        driver = self._connection
        wrote, driver._jobgate_wrote = driver._jobgate_wrote, False
        if not (driver._connection and driver._jobgate_inline):
            super().commit()
            return
        if wrote:
            driver._jobgate_writes += 1
        try:
            if wrote and driver._jobgate_writes % CHECKPOINT_EVERY == 0:
                await_(driver._execute(_commit_and_checkpoint, driver._conn))
            else:
                driver._conn.commit()
        except Exception as error:
            self._handle_exception(error)

    def rollback(self) -> None:
        """Roll back only a transaction that is open (the pool's reset after a commit
        has nothing to undo). `in_transaction` reads SQLite's autocommit flag, which
        only this connection's single user could be changing."""
        driver = self._connection
        driver._jobgate_wrote = False
        if driver._connection and not driver._conn.in_transaction:
            return
        super().rollback()


CHECKPOINT_EVERY = 64  # writing commits per connection between its checkpoints


def _commit_and_checkpoint(conn: sqlite3.Connection) -> None:
    """In the driver's thread: the COMMIT, then a PASSIVE checkpoint (it waits for no
    reader or writer; what readers still need stays in the WAL for the next one)."""
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()


def supported(driver_connection: Any) -> bool:
    return hasattr(driver_connection, "_execute") and hasattr(driver_connection, "_conn")


def _usable_here(driver: Any) -> bool:
    """Whether the sqlite3 connection accepts calls from this thread."""
    try:
        driver._conn.cursor().close()
    except sqlite3.ProgrammingError:  # check_same_thread
        return False
    return True


def install(dbapi_conn: Any) -> None:
    """Called from the engine's `connect` event with SQLAlchemy's adapted connection."""
    if type(dbapi_conn) is AsyncAdapt_aiosqlite_connection and supported(dbapi_conn._connection):
        dbapi_conn.__class__ = OneHopConnection
        driver = dbapi_conn._connection
        driver._jobgate_wrote = False
        driver._jobgate_inline = _usable_here(driver)
        driver._jobgate_writes = 0
        if driver._jobgate_inline:
            conn = driver._conn
            # Commits on the loop only in WAL mode, where a COMMIT waits for no lock.
            driver._jobgate_inline = conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        if driver._jobgate_inline:
            # The engine's busy timeout, restored after `_lock_now`; checkpoints are
            # made in the thread by `commit`, never by a COMMIT on the loop.
            driver._jobgate_busy_ms = conn.execute("PRAGMA busy_timeout").fetchone()[0]
            conn.execute("PRAGMA wal_autocheckpoint=0")
