"""SQLite statements in one trip to aiosqlite's thread instead of three or four.

SQLAlchemy's aiosqlite adapter makes a separate trip to the driver's thread to
open a cursor, to execute, to fetch the rows and to close the cursor, and one more
to roll back a connection going back to the pool even when its transaction has
already committed. Each trip is a future, a wake-up of the event loop and two
greenlet switches; under load they were a quarter of the gateway's CPU. Here a
statement is one trip (cursor, execute, rows, rowcount, lastrowid and close, all
in the driver's thread), and a rollback with no transaction open makes none.

The adapted connection's class is swapped when the engine connects
(`install`); nothing else changes: same driver, same SQL, same transactions. It
reaches aiosqlite's thread through `Connection._execute` and `_conn`, present
from aiosqlite 0.17 to today's 0.22; if they are missing, `install` leaves the
stock adapter in place.
"""

from __future__ import annotations

import collections
from typing import Any

from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
)
from sqlalchemy.util import EMPTY_DICT
from sqlalchemy.util.concurrency import await_


class OneHopCursor(AsyncAdapt_aiosqlite_cursor):
    """A cursor whose every statement runs whole in the driver's thread."""

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
        async with self._adapt_connection._execute_mutex:
            desc, rows, rowcount, lastrowid = await self._connection._execute(
                self._run, many, operation, parameters
            )
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


class OneHopConnection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()

    _cursor_cls = OneHopCursor

    def rollback(self) -> None:
        """Roll back only a transaction that is open (the pool's reset after a commit
        has nothing to undo). `in_transaction` reads SQLite's autocommit flag, which
        only this connection's single user could be changing."""
        driver = self._connection
        if driver._connection and not driver._conn.in_transaction:
            return
        super().rollback()


def supported(driver_connection: Any) -> bool:
    return hasattr(driver_connection, "_execute") and hasattr(driver_connection, "_conn")


def install(dbapi_conn: Any) -> None:
    """Called from the engine's `connect` event with SQLAlchemy's adapted connection."""
    if type(dbapi_conn) is AsyncAdapt_aiosqlite_connection and supported(dbapi_conn._connection):
        dbapi_conn.__class__ = OneHopConnection
