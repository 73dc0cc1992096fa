"""The database: URLs, the connection pool, and the one place transactions begin and end.

Repositories are handed a `Txn` (app/core/txn.py): SQLAlchemy statements run on a
driver connection from this module's pool, sqlite3 on the event loop
(app/core/sqlite_conn.py) or asyncpg (app/core/pg_conn.py). Alembic and the
start-up checks keep SQLAlchemy's own (sync) engines.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.pool import NullPool

from app.core import txn as txn_module
from app.core.conn_pool import DROP, PING_AFTER_IDLE_SECONDS, Connection, Pool
from app.core.sqlexec import Compiler
from app.core.txn import Txn

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
    ) -> None:
        self.url = url
        self.is_sqlite = is_sqlite(url)
        self._info = dict(info or {})  # copied into every transaction's `info`
        self._compiler: Compiler | None = None
        self._compiler_lock = asyncio.Lock()
        self.pool = Pool(self._connect, size=pool_size, ping_after=ping_after)
        # SQLite has one writer. Its busy handler makes a waiting BEGIN IMMEDIATE sleep
        # and retry (1, 2, 5 ... 100 ms), so writers of one process that meet on the
        # lock lose up to 100 ms a turn; queued on this lock, the next one starts the
        # moment the previous commits. Other processes still queue on the busy timeout.
        self._writer_turn = asyncio.Lock() if self.is_sqlite else None

    @property
    def compiler(self) -> Compiler:
        """SQLAlchemy's dialect and the compiled statements, known after a first connection."""
        if self._compiler is None:
            raise RuntimeError("no connection yet: the dialect is known after the first")
        return self._compiler

    async def _connect(self) -> Connection:
        for probe in txn_module.PROBES:
            probe.connected()
        if self._compiler is None:
            async with self._compiler_lock:
                if self._compiler is None:
                    self._compiler = Compiler(await asyncio.to_thread(_dialect, self.url))
        if self.is_sqlite:
            from app.core.sqlite_conn import SqliteConnection

            return await SqliteConnection.open(sqlite_path(self.url))
        from app.core.pg_conn import PgConnection

        return await PgConnection.open(self.url)

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

    write = transaction  # the name that says what it is for, beside `read`

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Txn]:
        """A transaction that only reads: no write lock on SQLite (one snapshot), and
        no BEGIN on PostgreSQL (each statement reads committed data, as before).

        For GETs, waits and streams; anything that writes uses `write()`.
        """
        async with self._unit(write=False) as txn:
            yield txn

    @asynccontextmanager
    async def _unit(self, *, write: bool) -> AsyncIterator[Txn]:
        async with self.pool.connection() as conn:
            txn = Txn(conn, self.compiler, write=write, info=dict(self._info))
            try:
                began = await conn.begin(write)
            except Exception as err:
                await _reset(conn)
                raise conn.translate(err, "BEGIN", ()) from err
            if txn_module.PROBES and began is not None:
                txn_module.seen(txn, began, (), 0.0)
            try:
                yield txn
                await txn._before_commit()
                try:
                    await conn.commit()
                except Exception as err:
                    raise conn.translate(err, "COMMIT", ()) from err
            except BaseException:
                await _reset(conn)
                txn._rolled_back()
                raise
            txn._committed()

    async def dispose(self) -> None:
        await self.pool.dispose()


async def _reset(conn: Any) -> None:
    """Roll back whatever is open; a connection that cannot is never reused."""
    try:
        await conn.rollback()
    except Exception:
        conn.info[DROP] = True


def _dialect(url: str) -> Dialect:
    """SQLAlchemy's dialect for the driver, initialized on one connection of its own."""
    engine = create_engine(async_url(url), poolclass=NullPool) if is_sqlite(url) else None
    if engine is not None:
        with engine.connect():
            pass
        dialect = engine.dialect
        engine.dispose()
        return dialect
    return asyncio.run(_pg_dialect(url))


async def _pg_dialect(url: str) -> Dialect:
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(async_url(url), poolclass=NullPool)
    try:
        async with engine.connect():
            pass
        return engine.dialect
    finally:
        await engine.dispose()
