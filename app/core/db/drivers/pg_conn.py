"""A PostgreSQL connection on asyncpg, for `app/core/db/txn.py`.

asyncpg speaks the protocol in C: one statement costs about 60 us of the gateway's
CPU, against about 240 us through psycopg's async connection on this machine (measured
in one run; docs/history/benchmarks.md). Statements are compiled by SQLAlchemy's asyncpg dialect
(`$1` parameters and its bind casts); JSON arrives as SQLAlchemy's serialized text
and leaves as parsed values through the codecs its dialect installs on every
connection (`setup_asyncpg_json_codec`), set up the same way here.

A read transaction sends no BEGIN: each statement reads its own snapshot, as it
did at READ COMMITTED inside one; a stream or a savepoint begins one first.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import asyncpg
from sqlalchemy import exc
from sqlalchemy.engine import make_url

from app.core.db.drivers.conn_pool import DROP, GONE

STREAM_CHUNK = 500
CONNECT_TIMEOUT_S = 10.0


def dsn(url: str) -> str:
    """The libpq-style address asyncpg (and Alembic's psycopg) reads, from a SQLAlchemy URL of any
    driver."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _codecs(conn: asyncpg.Connection) -> None:
    """JSON in and out as text, parsed here (what SQLAlchemy's asyncpg dialect sets)."""

    def decode(value: bytes) -> Any:
        return json.loads(value.decode())

    def decode_b(value: bytes) -> Any:
        return json.loads(value[1:].decode())  # jsonb's binary form: a version byte first

    await conn.set_type_codec(
        "json", encoder=str.encode, decoder=decode, schema="pg_catalog", format="binary"
    )
    await conn.set_type_codec(
        "jsonb",
        encoder=lambda s: b"\x01" + s.encode(),
        decoder=decode_b,
        schema="pg_catalog",
        format="binary",
    )


class PgConnection:
    """One asyncpg connection, used by one transaction at a time (the pool's rule)."""

    dialect_name = "postgresql"

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self.info: dict[str, Any] = {}
        self.trips = 0  # no threads here; kept for the same counters as SQLite

    @classmethod
    async def open(cls, url: str, server_settings: Mapping[str, str] | None = None) -> PgConnection:
        """`server_settings`: session settings sent with the connection (the bounded waits
        of docs/operations.md, "Bounded waits")."""
        conn = await asyncpg.connect(
            dsn(url), timeout=CONNECT_TIMEOUT_S, server_settings=dict(server_settings or {})
        )
        try:
            await _codecs(conn)
        except BaseException:
            await conn.close()
            raise
        return cls(conn)

    async def execute(
        self, sql: str, args: Sequence[Any], returns_rows: bool
    ) -> tuple[list[Any] | None, int, tuple[str, ...]]:
        """(rows, or None for a statement that returns none; rows affected; column
        names). The caller says whether it returns rows (asyncpg answers either the
        rows or the command's tag)."""
        if returns_rows:
            rows = await self.conn.fetch(sql, *args)
            return rows, len(rows), tuple(rows[0].keys()) if rows else ()
        return None, _affected(await self.conn.execute(sql, *args)), ()

    async def executemany(self, sql: str, args: Sequence[Sequence[Any]]) -> int:
        await self.conn.executemany(sql, args)
        return len(args)

    async def stream(self, sql: str, args: Sequence[Any]) -> AsyncIterator[list[Any]]:
        if not self.in_transaction:
            await self.conn.execute("BEGIN")
        cursor = await self.conn.cursor(sql, *args)
        while chunk := await cursor.fetch(STREAM_CHUNK):
            yield chunk

    async def begin(self, write: bool) -> str | None:
        """Begin a write; a read sends nothing. The statement sent (for probes)."""
        if not write:
            return None
        await self.conn.execute("BEGIN")
        return "BEGIN"

    async def commit(self) -> None:
        if self.in_transaction:
            await self.conn.execute("COMMIT")

    async def rollback(self) -> None:
        if self.in_transaction:
            await self.conn.execute("ROLLBACK")

    @property
    def in_transaction(self) -> bool:
        return bool(self.conn.is_in_transaction())

    def usable(self) -> bool:
        return not self.conn.is_closed()

    async def ping(self) -> None:
        await self.conn.fetchval("SELECT 1")

    def translate(self, err: Exception, sql: str, args: Any) -> Exception:
        return translate(self, err, sql, args)

    async def close(self) -> None:
        try:
            await self.conn.close(timeout=2)
        except Exception:
            self.conn.terminate()


def _affected(status: str) -> int:
    """Rows affected, from a command tag such as 'UPDATE 1' or 'INSERT 0 3'."""
    last = status.rpartition(" ")[2]
    return int(last) if last.isdigit() else -1


# SQLSTATE classes as SQLAlchemy's PostgreSQL dialects name their errors.
_BY_CLASS: dict[str, type[exc.DBAPIError]] = {
    "08": exc.OperationalError,  # connection exception
    "22": exc.DataError,
    "23": exc.IntegrityError,
    "25": exc.InternalError,  # invalid transaction state
    "40": exc.OperationalError,  # serialization failure, deadlock
    "42": exc.ProgrammingError,
    "53": exc.OperationalError,  # insufficient resources
    "57": exc.OperationalError,  # operator intervention (e.g. the backend was terminated)
}


def translate(conn: PgConnection, err: Exception, sql: str, args: Any) -> Exception:
    """asyncpg's error as SQLAlchemy's, as its engine raised them. A connection the server
    closed is marked for the pool to drop with every older one; one left in an unknown
    state (asyncpg refused the call), to drop alone. A lost connection is raised as
    `connection_invalidated`, which app/core/db/write_faults.py answers as unavailable."""
    if isinstance(err, _GONE) or not conn.usable():
        conn.info[GONE] = True
        return exc.OperationalError(sql, args, err, connection_invalidated=True)
    if isinstance(err, asyncpg.PostgresError):
        state = getattr(err, "sqlstate", None) or ""
        return _BY_CLASS.get(state[:2], exc.DBAPIError)(sql, args, err)
    if isinstance(err, asyncpg.InternalClientError):
        # "cannot switch to state ...": the protocol is mid-way through a call the server
        # cut off; nothing more can run on it.
        conn.info[DROP] = True
        return exc.OperationalError(sql, args, err, connection_invalidated=True)
    if isinstance(err, asyncpg.InterfaceError):  # misuse on a live connection: a bug
        conn.info[DROP] = True
        return exc.InterfaceError(sql, args, err)
    return err


# The server went away: the connection, and every one opened before it, are dead.
_GONE = (
    OSError,
    asyncpg.PostgresConnectionError,  # includes ConnectionDoesNotExistError
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.CannotConnectNowError,
)
