"""A SQLite connection for an event loop: what cannot wait runs on the loop, the rest
in a thread.

In WAL mode only two things can make a SQLite call wait: taking the write lock
(`BEGIN IMMEDIATE` while another connection, in this process or another, holds it;
SQLite's busy handler then sleeps and retries up to the busy timeout) and a
checkpoint (it may fsync). Everything else answers at once: a statement of a
transaction that holds its lock, a deferred `BEGIN`, a read, a COMMIT. So:
- `BEGIN IMMEDIATE` is first tried on the loop with the busy timeout at 0 for that one
  statement; only if the lock is taken does it wait in a thread (`asyncio.to_thread`),
  with the busy timeout;
- the connection makes no automatic checkpoint; every `CHECKPOINT_EVERY`-th writing
  COMMIT goes to a thread with a PASSIVE checkpoint after it;
- everything else runs on the loop, a statement whole (execute, rows, counts).
Without WAL (a file system that refuses it), every call goes to the thread.

docs/history/benchmarks.md measured what it replaces (SQLAlchemy's aiosqlite adapter and, before it,
aiosqlite's thread for every call): see the README's benchmark section.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import exc

BUSY_TIMEOUT_MS = 30_000  # writers queue behind each other instead of failing
CHECKPOINT_EVERY = 64  # writing commits per connection between its checkpoints
STREAM_CHUNK = 500

T = TypeVar("T")
Rows = list[tuple[Any, ...]]
Answer = tuple[Rows | None, int, tuple[str, ...]]


def pragmas(conn: Any) -> bool:
    """WAL so readers never block the writer, a busy timeout so writers wait their turn
    (every connection to a jobgate database, Alembic's too); True if in WAL mode."""
    cur = conn.cursor()
    try:
        cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")  # first: the next may wait
        wal = cur.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
    finally:
        cur.close()
    return bool(wal)


def decode_text(raw: bytes) -> str:
    """A TEXT value as str; invalid UTF-8 becomes U+FFFD (sqlite3's default raises)."""
    return raw.decode("utf-8", "replace")


class SqliteConnection:
    """One sqlite3 connection, used by one transaction at a time (the pool's rule)."""

    dialect_name = "sqlite"

    def __init__(self, conn: sqlite3.Connection, inline: bool) -> None:
        self.conn = conn
        self.inline = inline  # WAL: lock-free calls run on the loop
        self.info: dict[str, Any] = {}  # per connection, e.g. functions registered
        self.wrote = False
        self.writes = 0  # writing commits, for the checkpoint rule
        self.trips = 0  # calls that went to a thread (bench/statements_per_job.py)

    @classmethod
    async def open(cls, path: str) -> SqliteConnection:
        def connect() -> SqliteConnection:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            # Bytes that are not UTF-8 (a row written outside jobgate) read as U+FFFD
            # instead of failing the whole statement, and every list with that row.
            conn.text_factory = decode_text
            wal = pragmas(conn)
            if wal:
                conn.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints: see `commit`
            return cls(conn, wal)

        return await asyncio.to_thread(connect)

    async def _in_thread(self, fn: Callable[[], T]) -> T:
        """`fn` in a thread. If the caller is cancelled meanwhile, the connection stays
        busy until `fn` returns, so the cancellation waits for it (then the
        transaction's rollback sees the connection as `fn` left it)."""
        self.trips += 1
        fut = asyncio.get_running_loop().run_in_executor(None, fn)
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await fut
            raise

    def _run(self, sql: str, args: Sequence[Any]) -> Answer:
        cur = self.conn.execute(sql, args)
        try:
            desc = cur.description
            if desc is None:
                return None, cur.rowcount, ()
            return cur.fetchall(), cur.rowcount, tuple(d[0] for d in desc)
        finally:
            cur.close()

    async def execute(self, sql: str, args: Sequence[Any], returns_rows: bool = True) -> Answer:
        """(rows, or None for a statement that returns none; rows affected; column
        names). Whether it returns rows, SQLite says itself."""
        if self.inline and (self.conn.in_transaction or _reads(sql)):
            return self._run(sql, args)
        return await self._in_thread(lambda: self._run(sql, args))

    async def executemany(self, sql: str, args: Sequence[Sequence[Any]]) -> int:
        def run() -> int:
            cur = self.conn.executemany(sql, args)
            try:
                return cur.rowcount
            finally:
                cur.close()

        if self.inline and self.conn.in_transaction:
            return run()
        return await self._in_thread(run)

    async def stream(self, sql: str, args: Sequence[Any]) -> AsyncIterator[Rows]:
        """Rows in chunks, read on the loop (a read in WAL mode waits for nobody)."""
        cur = self.conn.execute(sql, args) if self.inline else None
        if cur is None:
            cur = await self._in_thread(lambda: self.conn.execute(sql, args))
        try:
            while chunk := cur.fetchmany(STREAM_CHUNK):
                yield chunk
        finally:
            cur.close()

    async def begin(self, write: bool) -> str | None:
        """Begin; the statement sent (for probes)."""
        self.wrote = write
        if not write:
            self.conn.execute("BEGIN")  # deferred: takes no lock
            return "BEGIN"
        if not (self.inline and self._lock_now()):
            await self._in_thread(lambda: self.conn.execute("BEGIN IMMEDIATE"))
        return "BEGIN IMMEDIATE"

    def _lock_now(self) -> bool:
        """`BEGIN IMMEDIATE` on the loop if the write lock is free this instant; False
        (nothing begun) if another connection holds it, to wait for it in a thread."""
        self.conn.execute("PRAGMA busy_timeout=0")
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            return True
        except sqlite3.OperationalError as err:
            if getattr(err, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY:
                return False
            raise
        finally:
            self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    async def commit(self) -> None:
        wrote, self.wrote = self.wrote, False
        if not self.conn.in_transaction:
            return
        if wrote:
            self.writes += 1
        if not self.inline:
            await self._in_thread(self.conn.commit)
        elif wrote and self.writes % CHECKPOINT_EVERY == 0:
            await self._in_thread(self._commit_and_checkpoint)
        else:
            self.conn.commit()

    def _commit_and_checkpoint(self) -> None:
        """The COMMIT, then a PASSIVE checkpoint: it waits for no reader or writer, and
        what readers still need stays in the WAL for the next one."""
        self.conn.commit()
        self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    async def rollback(self) -> None:
        self.wrote = False
        if self.conn.in_transaction:
            self.conn.rollback()  # releases locks; waits for nothing

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def usable(self) -> bool:
        return True

    async def ping(self) -> None:
        return None  # a file: nothing to lose while idle

    async def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def translate(self, err: Exception, sql: str, args: Any) -> Exception:
        """The driver's error as SQLAlchemy's (IntegrityError, OperationalError...), as
        its engine raised them, so callers catch what they caught before."""
        if isinstance(err, sqlite3.Error):
            return exc.DBAPIError.instance(sql, args, err, sqlite3.Error)
        return err


def _reads(sql: str) -> bool:
    """A statement outside a transaction that takes no write lock (in WAL mode, waits
    for nobody): a SELECT or a deferred BEGIN."""
    head = sql.lstrip()[:6].upper()
    return head == "SELECT" or sql == "BEGIN"
