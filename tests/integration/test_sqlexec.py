"""`app/core/db/sqlexec.py` sends what SQLAlchemy's own execution sends, and reads back what
its ORM reads: the same SQL, the same converted arguments, the same values, on the
back-end under test. If a SQLAlchemy upgrade changes the internals it relies on,
these fail before a wrong value reaches a table."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import bindparam, create_engine, event, func, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.orm import Session

from app.core.db.database import Database, async_url, is_sqlite
from app.core.db.sqlexec import bind
from app.core.db.txn import Txn
from app.operations import repository as repo
from app.operations.domain.models import HistoryEntry, OperationTable
from app.operations.domain.operation import Operation
from app.operations.domain.states import State
from app.operations.repository.tables import HIST, OPS
from app.operations.repository.writes import _FENCED

NOW = datetime(2026, 12, 2, 16, 30, 5, 123456, tzinfo=UTC)


def operation(op_id: str, **more: Any) -> Operation:
    fields: dict[str, Any] = dict(
        id=op_id,
        principal="dev",
        idempotency_key=f"key-{op_id}",
        fingerprint="sha256:x",
        provider="mock",
        kind="report",
        input={"scenario": {"name": "fast"}, "text": "é \u2028"},
        provider_token=f"jg_{op_id}",
        trace_id="tr_1",
        state=State.OBSERVING,
        create_deadline_at=NOW + timedelta(minutes=2),
        result_deadline_at=NOW + timedelta(hours=1),
        next_poll_at=NOW,
        labels={"team": "a", "n": 3},
        cancel_seconds=12.5,
        created_at=NOW,
        updated_at=NOW,
    )
    fields.update(more)
    return Operation(**fields)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    async with database.read():
        pass  # the dialect is known after the first connection
    yield database
    await database.dispose()


class Sent:
    """What SQLAlchemy's engine sent to the driver, statement by statement."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def __call__(self, _c: Any, _cur: Any, sql: str, params: Any, _ctx: Any, many: bool) -> None:
        self.calls.append((sql, params))


def sqlalchemy_sends(database_url: str, stmt: Any, params: Any) -> list[tuple[str, Any]]:
    """The SQL and arguments SQLAlchemy's engine (same driver) sends for `stmt`, rolled back."""
    sent = Sent()
    if is_sqlite(database_url):
        engine: Engine = create_engine(async_url(database_url))
        event.listen(engine, "before_cursor_execute", sent)
        with engine.connect() as conn:
            conn.execute(stmt, params)
            conn.rollback()
        engine.dispose()
        return sent.calls

    async def run() -> None:
        engine = create_async_engine(async_url(database_url))
        event.listen(engine.sync_engine, "before_cursor_execute", sent)
        async with engine.connect() as conn:
            await conn.execute(stmt, params)
            await conn.rollback()
        await engine.dispose()

    import asyncio
    import threading

    t = threading.Thread(target=lambda: asyncio.run(run()))  # its own loop
    t.start()
    t.join()
    return sent.calls


def ours(db: Database, stmt: Any, params: Any) -> tuple[str, tuple[Any, ...]]:
    return bind(db.compiler.plan(stmt, params or (), False), params)


async def test_a_fenced_update_sends_what_sqlalchemy_sends(db: Database) -> None:
    params = {
        "remote_state": "running",
        "next_poll_at": NOW + timedelta(seconds=2),
        "result_summary": {"processed": 3},
        "updated_at": NOW,
        "k_id": "op_1",
        "k_owner": "w",
        "k_token": 4,
    }
    [(sql, args)] = sqlalchemy_sends(db.url, _FENCED, params)
    assert ours(db, _FENCED, params) == (sql, tuple(args))


async def test_an_expanding_in_and_a_json_path_send_what_sqlalchemy_sends(db: Database) -> None:
    stmt = select(OPS.c.id).where(
        OPS.c.id.in_(["op_1", "op_2", "op_3"]), OPS.c.labels["team"].as_string() == "a"
    )
    [(sql, args)] = sqlalchemy_sends(db.url, stmt, None)
    assert ours(db, stmt, None) == (sql, tuple(args))


async def test_an_insert_leaving_out_defaulted_columns_sends_what_sqlalchemy_sends(
    db: Database,
) -> None:
    values = {
        "operation_id": "op_1",
        "at": NOW,
        "kind": "note",
        "actor": "test",
        "cause": "c",
        "from_state": None,
        "to_state": None,
        "data": None,
    }
    [(sql, args)] = sqlalchemy_sends(db.url, insert(HIST), values)
    assert ours(db, insert(HIST), values) == (sql, tuple(args))
    # Scalar column defaults are computed as SQLAlchemy computes them.
    short = {k: v for k, v in _row_of(operation("op_9")).items() if k != "version"}
    [(sql, args)] = sqlalchemy_sends(db.url, insert(OPS), short)
    assert ours(db, insert(OPS), short) == (sql, tuple(args))


def _row_of(op: Operation) -> dict[str, Any]:
    return {c.key: getattr(op, c.key) for c in OPS.columns}


async def test_rows_read_back_are_what_the_orm_reads(db: Database) -> None:
    """Written through `Txn`, read through both: the ORM's objects and ours agree on
    every column (aware datetimes, parsed JSON, the state enum, floats)."""
    async with db.transaction() as txn:
        txn.add(OperationTable(**_row_of(operation("op_1"))))
        await txn.flush()
        await txn.execute(insert(OPS), _row_of(operation("op_2", labels=None, input=[1, "x"])))
        await repo.append_history_rows(
            txn,
            [
                repo.history_row(operation_id="op_1", at=NOW, kind="note", actor="a", cause="c"),
                repo.history_row(
                    operation_id="op_1", at=NOW, kind="note", actor="b", cause="d", data={"x": 1}
                ),
            ],
        )
    async with db.read() as txn:
        mine = {op.id: op for op in (await txn.execute(select(OperationTable))).scalars()}
        rows = {op_id: await repo.get(txn, op_id) for op_id in ("op_1", "op_2")}
        hist = list((await txn.execute(select(HistoryEntry).order_by(HIST.c.id))).scalars())
    engine = create_engine(_sync(db.url))
    with Session(engine) as session:
        theirs = {op.id: op for op in session.scalars(select(OperationTable))}
        their_hist = list(session.scalars(select(HistoryEntry).order_by(HIST.c.id)))
        for op_id in ("op_1", "op_2"):
            for col in OPS.columns:
                theirs_value = getattr(theirs[op_id], col.key)
                assert getattr(mine[op_id], col.key) == theirs_value, col.key
                assert getattr(rows[op_id], col.key) == theirs_value, col.key
        assert [h.model_dump() for h in hist] == [h.model_dump() for h in their_hist]
    engine.dispose()
    assert isinstance(mine["op_1"].state, State) and mine["op_1"].created_at == NOW
    assert mine["op_1"].version == 0  # the column's default, left out by the insert
    assert mine["op_2"].labels is None and mine["op_2"].input == [1, "x"]
    assert [h.data for h in hist] == [None, {"x": 1}] and hist[0].id is not None


def _sync(url: str) -> str:
    from app.core.db.database import sync_url

    return sync_url(url)


async def test_rows_have_names_counts_and_scalars(db: Database) -> None:
    async with db.transaction() as txn:
        await txn.execute(insert(OPS), [_row_of(operation(f"op_{i}")) for i in range(3)])
        held = select(OPS.c.id, OPS.c.version).where(OPS.c.id.in_(bindparam("ids", expanding=True)))
        rows = (await txn.execute(held.order_by(OPS.c.id), {"ids": ["op_0", "op_2"]})).all()
        assert [(r.id, r._mapping["version"]) for r in rows] == [("op_0", 0), ("op_2", 0)]
        moved = await txn.execute(
            update(OPS).where(OPS.c.id != "op_1").values(version=OPS.c.version + 1)
        )
        assert moved.rowcount == 2
        assert (await txn.execute(select(func.count()).select_from(OPS))).scalar_one() == 3
        assert (await txn.execute(select(OPS.c.id).where(OPS.c.id == "no"))).first() is None


async def test_a_savepoint_rolls_back_alone(db: Database) -> None:
    async with db.transaction() as txn:
        await txn.execute(insert(OPS), _row_of(operation("op_1")))
        with pytest.raises(ValueError):
            async with txn.begin_nested():
                await txn.execute(insert(OPS), _row_of(operation("op_2")))
                raise ValueError("undo op_2")
    async with db.read() as txn:
        ids = (await txn.execute(select(OPS.c.id))).scalars().all()
        streamed = [row.id async for row in await txn.stream(select(OPS))]
    assert ids == ["op_1"] and streamed == ["op_1"]


async def test_after_commit_hooks_run_only_after_a_commit(db: Database) -> None:
    ran: list[str] = []

    async def work(txn: Txn, name: str) -> None:
        txn.on_commit(lambda: ran.append(name))
        await txn.execute(insert(OPS), _row_of(operation(name)))

    async with db.transaction() as txn:
        await work(txn, "op_kept")
        assert ran == []
    assert ran == ["op_kept"]
    with pytest.raises(RuntimeError):
        async with db.transaction() as txn:
            await work(txn, "op_undone")
            raise RuntimeError
    assert ran == ["op_kept"]


async def test_a_read_transaction_refuses_to_write(db: Database) -> None:
    """On PostgreSQL a read sends no BEGIN: a write there would commit on its own."""
    with pytest.raises(RuntimeError, match="read transaction"):
        async with db.read() as txn:
            await txn.execute(insert(OPS), _row_of(operation("op_1")))
    async with db.read() as txn:
        assert (await txn.execute(select(func.count()).select_from(OPS))).scalar() == 0
