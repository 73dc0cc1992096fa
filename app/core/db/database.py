"""The database: URLs, the connection pool, and the one place transactions begin and end.

Repositories are handed a `Txn` (app/core/db/txn.py): SQLAlchemy statements run on a
driver connection from this module's pool, sqlite3 on the event loop
(app/core/db/drivers/sqlite_conn.py) or asyncpg (app/core/db/drivers/pg_conn.py). Alembic and the
start-up checks keep SQLAlchemy's own (sync) engines.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url
from sqlalchemy.engine.interfaces import Dialect

from app.core.config import PING_AFTER_IDLE_SECONDS
from app.core.db import txn as txn_module
from app.core.db import write_faults
from app.core.db.drivers.conn_pool import DROP, Connection, Pool
from app.core.db.sqlexec import Compiler
from app.core.db.txn import CommitHook, Txn

POOL_SIZE = 20  # connections per process (SQLite: one writes at a time, the rest read)


def async_url(url: str) -> str:
    """The URL of the driver transactions run on (for SQLAlchemy's dialect of it)."""
    u = make_url(url)
    if u.drivername.startswith("sqlite"):
        u = u.set(drivername="sqlite")
    elif u.drivername.startswith("postgresql"):
        u = u.set(drivername="postgresql+asyncpg")
    return u.render_as_string(hide_password=False)


def sync_url(url: str) -> str:
    """The sync-driver form (Alembic and scripts)."""
    u = make_url(url)
    if u.drivername.startswith("sqlite"):
        u = u.set(drivername="sqlite")
    elif u.drivername.startswith("postgresql"):
        u = u.set(drivername="postgresql+psycopg")
    return u.render_as_string(hide_password=False)


def is_sqlite(url: str) -> bool:
    return make_url(url).drivername.startswith("sqlite")


def sqlite_path(url: str) -> str:
    return make_url(url).database or ":memory:"


# Set while this task holds the process's SQLite writer turn (see Database.transaction).
_WRITER_TURN: ContextVar[bool] = ContextVar("jobgate_sqlite_writer_turn", default=False)


class Database:
    """Owns the pool and hands out transactions whose extent the caller scopes."""

    def __init__(
        self,
        url: str,
        *,
        info: dict[str, Any] | None = None,
        ping_after: float = PING_AFTER_IDLE_SECONDS,
        pool_size: int = POOL_SIZE,
        before_commit: Sequence[CommitHook] = (),
        session_settings: Mapping[str, str] | None = None,
    ) -> None:
        self.url = url
        # PostgreSQL: sent with every connection (lock, statement and idle-in-transaction
        # timeouts), so no request waits without bound behind another process's locks.
        self._session_settings = dict(session_settings or {})
        self.is_sqlite = is_sqlite(url)
        self._info = dict(info or {})  # copied into every transaction's `info`
        self._before_commit = tuple(before_commit)  # run in each write just before COMMIT
        self.compiler = Compiler(dialect_for(url))
        self.pool = Pool(self._connect, size=pool_size, ping_after=ping_after)
        # SQLite has one writer. Its busy handler makes a waiting BEGIN IMMEDIATE sleep
        # and retry (1, 2, 5 ... 100 ms), so writers of one process that meet on the
        # lock lose up to 100 ms a turn; queued on this lock, the next one starts the
        # moment the previous commits. Other processes still queue on the busy timeout.
        self._writer_turn = asyncio.Lock() if self.is_sqlite else None

    async def _connect(self) -> Connection:
        for probe in txn_module.PROBES:
            probe.connected()
        if self.is_sqlite:
            from app.core.db.drivers.sqlite_conn import SqliteConnection

            return await SqliteConnection.open(sqlite_path(self.url))
        from app.core.db.drivers.pg_conn import PgConnection

        try:
            return await PgConnection.open(self.url, self._session_settings)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as err:
            # Refused, timed out, not accepting connections, a login refused: whatever
            # the reason, this call has no database (write_faults.kind_of).
            raise write_faults.Unreachable(f"cannot connect to the database: {err}") from err

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Txn]:
        """One unit of work: commit on success, roll back on any exception."""
        turn = self._writer_turn
        if turn is None or _WRITER_TURN.get():  # PostgreSQL, or nested (SQLite refuses it)
            async with self._unit(write=True) as txn:
                yield txn
            return
        async with turn:
            mark = _WRITER_TURN.set(True)
            try:
                async with self._unit(write=True) as txn:
                    yield txn
            finally:
                with contextlib.suppress(ValueError):  # reset from another context
                    _WRITER_TURN.reset(mark)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Txn]:
        """A transaction that only reads: no write lock on SQLite (one snapshot), and
        no BEGIN on PostgreSQL (each statement reads committed data, as before).

        For GETs, waits and streams; anything that writes uses `transaction()`.
        """
        async with self._unit(write=False) as txn:
            yield txn

    @asynccontextmanager
    async def _unit(self, *, write: bool) -> AsyncIterator[Txn]:
        async with self.pool.connection() as conn:
            txn = Txn(
                conn,
                self.compiler,
                write=write,
                info=dict(self._info),
                before_commit=self._before_commit,
            )
            try:
                began = await conn.begin(write)
            except Exception as err:
                await _reset(conn)
                raise conn.translate(err, "BEGIN", ()) from err
            if txn_module.PROBES and began is not None:
                txn_module.seen(txn, began, (), 0.0)
            try:
                yield txn
                await txn.prepare_commit()
                try:
                    await conn.commit()
                except Exception as err:
                    raise conn.translate(err, "COMMIT", ()) from err
            except BaseException:
                await _reset(conn)
                txn.rolled_back()
                raise
            txn.committed()

    async def dispose(self) -> None:
        await self.pool.dispose()


async def _reset(conn: Any) -> None:
    """Roll back whatever is open; a connection that cannot is never reused."""
    try:
        await conn.rollback()
    except Exception:
        conn.info[DROP] = True


def dialect_for(url: str) -> Dialect:
    """SQLAlchemy's dialect for the driver transactions run on, made from its class (no
    engine, no connection): it compiles statements and converts values, nothing more."""
    cls: Any = make_url(async_url(url)).get_dialect()
    dialect: Dialect = cls(dbapi=cls.import_dbapi())
    return dialect
