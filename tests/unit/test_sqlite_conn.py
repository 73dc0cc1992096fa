"""SQLite transactions run on the event loop, except what may wait
(app/core/db/drivers/sqlite_conn.py):
a BEGIN IMMEDIATE while another connection holds the write lock, and the commit that
checkpoints; the loop runs on meanwhile, results and errors are the driver's, and a
transaction cancelled while it waits leaves nothing open behind it."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from app.core.db.database import Database
from app.core.db.drivers.sqlite_conn import BUSY_TIMEOUT_MS, CHECKPOINT_EVERY
from tests.support.timing import QUICK_S, budget

T = sa.table("t", sa.column("id", sa.Integer), sa.column("name", sa.String))


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    with sqlite3.connect(tmp_path / "t.db") as setup:
        setup.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE)")
    database = Database(f"sqlite:///{tmp_path}/t.db", pool_size=2)
    yield database
    await database.dispose()


def trips(db: Database) -> int:
    """Calls every pooled connection sent to a thread so far."""
    return sum(c.trips for c in db.pool.idle())


async def test_a_write_with_the_lock_free_takes_no_trip(db: Database) -> None:
    async with db.transaction() as txn:
        await txn.execute(sa.insert(T), {"name": "a"})
    before = trips(db)  # opening the connection went to a thread
    async with db.transaction() as txn:
        await txn.execute(sa.insert(T), {"name": "b"})
        rows = (await txn.execute(sa.select(T.c.name).order_by(T.c.id))).scalars().all()
        timeout = (await txn.execute(sa.text("PRAGMA busy_timeout"))).scalar_one()
    assert rows == ["a", "b"]
    # With the write lock free, BEGIN IMMEDIATE took it on the loop; the INSERT, the
    # SELECT and the COMMIT ran at once (in WAL mode they wait for nobody).
    assert trips(db) == before
    assert timeout == BUSY_TIMEOUT_MS  # restored after the instant BEGIN
    async with db.read() as txn:  # a deferred BEGIN and a read wait for nobody either
        assert (await txn.execute(sa.select(sa.func.count()).select_from(T))).scalar() == 2
    assert trips(db) == before


async def test_the_loop_runs_on_while_begin_immediate_waits_for_the_lock(
    tmp_path: Path, db: Database
) -> None:
    """Another connection holds the write lock; ours waits in a thread while a task on
    the loop runs, and that task is what lets the lock go. Were BEGIN IMMEDIATE left to
    wait on the loop, the task could never run and the write would fail after the busy
    timeout."""
    async with db.read():
        pass  # a pooled connection, opened
    before = trips(db)
    other = sqlite3.connect(tmp_path / "t.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while ticks < 5:
            await asyncio.sleep(0)
            ticks += 1
        other.execute("COMMIT")  # only a running loop gets here

    async def write() -> None:
        async with db.transaction() as txn:
            await txn.execute(sa.insert(T), {"name": "after"})

    running = asyncio.create_task(ticker())
    # Well inside the 30 s busy timeout: a BEGIN that slept on the loop would take it all.
    await asyncio.wait_for(write(), budget(QUICK_S))
    await running
    other.close()
    assert ticks == 5
    assert trips(db) == before + 1  # the BEGIN IMMEDIATE that found the lock taken


async def test_a_write_cancelled_while_it_waits_for_the_lock_leaves_nothing_open(
    tmp_path: Path, db: Database
) -> None:
    """The thread keeps the connection until its BEGIN returns; the cancellation waits
    for it, then the transaction rolls back, so the pooled connection holds no lock."""
    async with db.read():
        pass  # a pooled connection, opened
    (conn,) = db.pool.idle()  # the one the write takes
    waiting, main = threading.Event(), threading.current_thread()

    def traced(sql: str) -> None:  # a statement starts: the BEGIN in the thread is waiting
        if sql.startswith("BEGIN IMMEDIATE") and threading.current_thread() is not main:
            waiting.set()

    conn.conn.set_trace_callback(traced)
    other = sqlite3.connect(tmp_path / "t.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")

    async def write() -> None:
        async with db.transaction() as txn:
            await txn.execute(sa.insert(T), {"name": "never"})

    task = asyncio.create_task(write())
    async with asyncio.timeout(budget(QUICK_S)):
        while not waiting.is_set():  # BEGIN IMMEDIATE found the lock taken, went to a thread
            await asyncio.sleep(0)
    assert not task.done()
    task.cancel()
    other.execute("COMMIT")  # the waiting BEGIN now gets the lock, in the thread
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, budget(QUICK_S))
    other.close()
    assert all(not c.in_transaction for c in db.pool.idle())
    async with db.transaction() as txn:  # the write lock is free again
        assert (await txn.execute(sa.select(sa.func.count()).select_from(T))).scalar() == 0


async def test_counts_rows_and_errors_are_those_of_the_driver(db: Database) -> None:
    async with db.transaction() as txn:
        many = await txn.execute(sa.insert(T), [{"name": "a"}, {"name": "b"}, {"name": "c"}])
        assert many.rowcount == 3
        upd = await txn.execute(sa.update(T).where(T.c.id > 1).values(name=T.c.name + "!"))
        assert upd.rowcount == 2
        res = await txn.execute(sa.select(T.c.id, T.c.name).order_by(T.c.id))
        rows = res.all()
        assert rows == [(1, "a"), (2, "b!"), (3, "c!")]
        assert rows[1].name == "b!" and rows[1]._mapping["id"] == 2
    with pytest.raises(IntegrityError):
        async with db.transaction() as txn:
            await txn.execute(sa.insert(T), {"name": "a"})
    async with db.read() as txn:  # the failed transaction rolled back; the lock is free
        assert (await txn.execute(sa.select(sa.func.count()).select_from(T))).scalar() == 3


async def test_every_so_many_writing_commits_checkpoint_in_the_thread(
    tmp_path: Path, db: Database
) -> None:
    """The connections make no checkpoint of their own (one could fsync on the loop);
    every CHECKPOINT_EVERY-th writing commit goes to the thread with one, so the WAL is
    reused instead of growing with every write."""
    row = "x" * 4000  # about a page a commit
    rounds = 5
    wal = tmp_path / "t.db-wal"
    one_round = 0
    for i in range(rounds * CHECKPOINT_EVERY):
        async with db.transaction() as txn:
            await txn.execute(sa.insert(T), {"name": f"{i}{row}"})
        if i == 0:
            opened = trips(db)  # opening the connection went to a thread
        if i + 1 == CHECKPOINT_EVERY:
            one_round = wal.stat().st_size  # the WAL of one round's commits
    assert trips(db) == opened + rounds
    assert wal.stat().st_size < 2 * one_round  # without the checkpoints: 5 rounds' worth
    async with db.read() as txn:
        assert (await txn.execute(sa.text("PRAGMA wal_autocheckpoint"))).scalar() == 0
