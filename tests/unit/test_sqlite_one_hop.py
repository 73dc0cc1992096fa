"""The SQLite engine sends to aiosqlite's thread only what may wait (BEGIN IMMEDIATE
while another connection holds the write lock, a commit that checkpoints), each in
one trip, and makes none to reset a connection whose transaction already ended;
results are unchanged, and the loop runs on while a BEGIN IMMEDIATE waits for another
connection's write lock."""

from __future__ import annotations

import asyncio
import collections
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiosqlite.core
import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.core.db import READ_ONLY, SQLITE_BUSY_TIMEOUT_MS, make_engine
from app.core.sqlite_one_hop import CHECKPOINT_EVERY, OneHopConnection
from tests.support.timing import QUICK_S, budget


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[collections.Counter[str]]:
    """Every call queued to an aiosqlite thread, by the function it runs."""
    seen: collections.Counter[str] = collections.Counter()
    real = aiosqlite.core.Connection._execute

    async def counted(self: Any, fn: Any, *args: Any, **kw: Any) -> Any:
        seen[getattr(fn, "__name__", "?")] += 1
        return await real(self, fn, *args, **kw)

    monkeypatch.setattr(aiosqlite.core.Connection, "_execute", counted)
    yield seen


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    eng = make_engine(f"sqlite:///{tmp_path}/t.db")
    async with eng.begin() as conn:
        await conn.exec_driver_sql("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE)")
    yield eng
    await eng.dispose()


async def test_a_write_with_the_lock_free_takes_no_trip(
    engine: AsyncEngine, trips: collections.Counter[str]
) -> None:
    trips.clear()
    async with engine.begin() as conn:
        assert isinstance((await conn.get_raw_connection()).dbapi_connection, OneHopConnection)
        await conn.execute(sa.text("INSERT INTO t (name) VALUES ('a')"))
        rows = (await conn.execute(sa.text("SELECT name FROM t"))).all()
        timeout = (await conn.execute(sa.text("PRAGMA busy_timeout"))).scalar_one()
    assert rows == [("a",)]
    # None: with the write lock free, BEGIN IMMEDIATE took it on the loop; the INSERT,
    # the SELECT and the COMMIT ran at once (in WAL mode they wait for nobody), and no
    # rollback trip when the connection goes back to the pool.
    assert trips == {}
    assert timeout == SQLITE_BUSY_TIMEOUT_MS  # restored after the instant BEGIN
    trips.clear()
    async with engine.execution_options(**{READ_ONLY: True}).begin() as conn:  # a read
        assert (await conn.execute(sa.text("SELECT count(*) FROM t"))).scalar_one() == 1
    assert trips == {}  # a deferred BEGIN, the SELECT and its COMMIT wait for nobody


async def test_the_loop_runs_on_while_begin_immediate_waits_for_the_lock(
    tmp_path: Path, engine: AsyncEngine, trips: collections.Counter[str]
) -> None:
    """Another connection holds the write lock; ours waits in aiosqlite's thread while a
    task on the loop runs, and that task is what lets the lock go. Were BEGIN IMMEDIATE
    left to wait on the loop, the task could never run and the write would fail after
    the busy timeout."""
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
        async with engine.begin() as conn:
            await conn.execute(sa.text("INSERT INTO t (name) VALUES ('after')"))

    running = asyncio.create_task(ticker())
    # Well inside the 30 s busy timeout: a BEGIN that slept on the loop would take it all.
    await asyncio.wait_for(write(), budget(QUICK_S))
    await running
    other.close()
    assert ticks == 5
    assert trips["_run"] == 1  # the BEGIN IMMEDIATE that found the lock taken


async def test_counts_rows_and_errors_are_those_of_the_driver(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        res = await conn.execute(sa.text("INSERT INTO t (name) VALUES ('a')"))
        assert res.lastrowid == 1
        many = await conn.execute(
            sa.text("INSERT INTO t (name) VALUES (:n)"), [{"n": "b"}, {"n": "c"}]
        )
        assert many.rowcount == 2
        upd = await conn.execute(sa.text("UPDATE t SET name = name || '!' WHERE id > 1"))
        assert upd.rowcount == 2
        res = await conn.execute(sa.text("SELECT id, name FROM t ORDER BY id"))
        assert list(res.keys()) == ["id", "name"]
        assert res.all() == [(1, "a"), (2, "b!"), (3, "c!")]
    with pytest.raises(IntegrityError):
        async with engine.begin() as conn:
            await conn.execute(sa.text("INSERT INTO t (name) VALUES ('a')"))


async def test_a_transaction_left_open_is_still_rolled_back_on_return(
    engine: AsyncEngine,
) -> None:
    """Rollback skips only connections with nothing open: one closed inside its
    BEGIN IMMEDIATE is rolled back, or it would keep SQLite's write lock."""
    conn = await engine.connect()
    await conn.exec_driver_sql("INSERT INTO t (name) VALUES ('never')")  # begins
    raw = (await conn.get_raw_connection()).dbapi_connection
    assert raw is not None and raw._connection._conn.in_transaction
    await conn.close()  # neither committed nor rolled back by the caller
    assert raw is not None and not raw._connection._conn.in_transaction
    async with engine.begin() as other:  # the write lock is free
        rows = (await other.execute(sa.text("SELECT count(*) FROM t"))).scalar_one()
    assert rows == 0


async def test_every_so_many_writing_commits_checkpoint_in_the_thread(
    tmp_path: Path, engine: AsyncEngine, trips: collections.Counter[str]
) -> None:
    """The connections make no checkpoint of their own (one could fsync on the loop);
    every CHECKPOINT_EVERY-th writing commit goes to the thread with one, so the WAL is
    reused instead of growing with every write."""
    trips.clear()
    row = "x" * 4000  # about a page a commit
    rounds = 5
    wal = tmp_path / "t.db-wal"
    for i in range(rounds * CHECKPOINT_EVERY):
        async with engine.begin() as conn:
            await conn.execute(sa.text("INSERT INTO t (name) VALUES (:n)"), {"n": f"{i}{row}"})
        if i + 1 == CHECKPOINT_EVERY:
            one_round = wal.stat().st_size  # the WAL of one round's commits
    assert trips == {"_commit_and_checkpoint": rounds}
    assert wal.stat().st_size < 2 * one_round  # without the checkpoints: 5 rounds' worth
    async with engine.connect() as conn:
        assert (await conn.exec_driver_sql("PRAGMA wal_autocheckpoint")).scalar_one() == 0
