"""Database engines and the one place transactions begin and end."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from app.core import pool_ping, sqlite_one_hop

SQLITE_BUSY_TIMEOUT_MS = 30_000  # writers queue behind each other instead of failing
PING_AFTER_IDLE_SECONDS = 1.0  # PostgreSQL: a pooled connection idle this long is pinged first


def async_url(url: str) -> str:
    """The async-driver form of a configured SQLAlchemy URL."""
    u = make_url(url)
    if u.drivername in ("sqlite", "sqlite+pysqlite"):
        u = u.set(drivername="sqlite+aiosqlite")
    elif u.drivername in ("postgresql", "postgresql+psycopg", "postgresql+psycopg2"):
        u = u.set(drivername="postgresql+psycopg")
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


def sqlite_pragmas(dbapi_conn: Any) -> None:
    """WAL so readers never block the writer; a busy timeout so writers wait their turn."""
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


READ_ONLY = "jobgate_read_only"  # execution option: this transaction only reads
# Set while this task holds the process's SQLite writer turn (see Database.transaction).
_WRITER_TURN: ContextVar[bool] = ContextVar("jobgate_sqlite_writer_turn", default=False)


def make_engine(
    url: str, *, pool_size: int = 10, ping_after: float = PING_AFTER_IDLE_SECONDS
) -> AsyncEngine:
    """An async engine; on SQLite every write transaction starts with BEGIN IMMEDIATE.

    SQLite upgrades a read lock to a write lock lazily and fails that upgrade with
    SQLITE_BUSY without waiting; taking the write lock up front makes concurrent
    writers queue on the busy timeout instead. A transaction opened by
    `Database.read()` never writes, so it starts with a plain (deferred) BEGIN: in
    WAL mode it reads a snapshot and never competes with the writer.

    On PostgreSQL a pooled connection is pinged before use only after `ping_after`
    seconds idle (app/core/pool_ping.py), not on every checkout.
    """
    if is_sqlite(url):
        engine = create_async_engine(async_url(url), pool_size=pool_size, max_overflow=0)

        @event.listens_for(engine.sync_engine, "connect")
        def _connect(dbapi_conn: Any, _rec: Any) -> None:
            dbapi_conn.isolation_level = None
            sqlite_pragmas(dbapi_conn)
            sqlite_one_hop.install(dbapi_conn)  # only what may wait goes to the driver's thread

        @event.listens_for(engine.sync_engine, "begin")
        def _begin(conn: Any) -> None:
            reading = conn.get_execution_options().get(READ_ONLY, False)
            conn.exec_driver_sql("BEGIN" if reading else "BEGIN IMMEDIATE")

        return engine
    # The pool keeps every connection it opens, up to 2 x pool_size, as many as it
    # allowed before (pool_size plus as many overflowing); overflow connections were
    # closed on return and opened again at the next burst (issue 11: 70-170 connections
    # opened per benchmark run of 400 jobs).
    engine = create_async_engine(async_url(url), pool_size=2 * pool_size, max_overflow=0)
    pool_ping.install(engine, ping_after)
    return engine


class Database:
    """Owns the engine and hands out sessions whose transaction the caller scopes."""

    def __init__(
        self,
        url: str,
        *,
        info: dict[str, Any] | None = None,
        ping_after: float = PING_AFTER_IDLE_SECONDS,
    ) -> None:
        self.url = url
        self.engine = make_engine(url, ping_after=ping_after)
        # `info` is copied into every session (e.g. the audit trail's settings).
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False, info=info)
        # Same pool; the option only changes how SQLite begins (see make_engine).
        self.read_sessions = async_sessionmaker(
            self.engine.execution_options(**{READ_ONLY: True}), expire_on_commit=False, info=info
        )
        self.is_sqlite = is_sqlite(url)
        # SQLite has one writer. Its busy handler makes a waiting BEGIN IMMEDIATE sleep
        # and retry (1, 2, 5 ... 100 ms), so writers of one process that meet on the
        # lock lose up to 100 ms a turn; queued on this lock, the next one starts the
        # moment the previous commits. Other processes still queue on the busy timeout.
        self._writer_turn = asyncio.Lock() if self.is_sqlite else None

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """One unit of work: commit on success, roll back on any exception."""
        turn = self._writer_turn
        if turn is None or _WRITER_TURN.get():  # PostgreSQL, or nested (SQLite refuses it)
            async with self.sessions() as session, session.begin():
                yield session
            return
        async with turn:
            mark = _WRITER_TURN.set(True)
            try:
                async with self.sessions() as session, session.begin():
                    yield session
            finally:
                with contextlib.suppress(ValueError):  # reset from another context
                    _WRITER_TURN.reset(mark)

    write = transaction  # the name that says what it is for, beside `read`

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A transaction that only reads: no write lock on SQLite, one consistent snapshot.

        For GETs, waits and streams; anything that writes uses `write()`.
        """
        async with self.read_sessions() as session, session.begin():
            yield session

    async def dispose(self) -> None:
        await self.engine.dispose()
