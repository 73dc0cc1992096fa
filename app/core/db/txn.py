"""One transaction on one pooled driver connection: what every repository is handed.

It answers the part of SQLAlchemy's `AsyncSession` the repositories use, with the
same names: `execute(statement, params)` (a list of parameter sets runs the statement
for each), `add()` and `flush()` for a new mapped object, `stream()`,
`begin_nested()` (a savepoint) and `info`; `dialect` is SQLAlchemy's. Statements are
SQLAlchemy's, compiled and converted by SQLAlchemy (app/core/db/sqlexec.py); there is no
identity map, no unit of work and no lazy loading, none of which jobgate used.

`app/core/db/database.py` opens and ends transactions. Before the COMMIT of a
transaction that writes, the database's `before_commit` hooks run in it (wired where the
app is built: the audit trail appends its entries there); after it, the callbacks given
to `on_commit`; after a rollback, none of them.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import insert, inspect
from sqlalchemy.engine.interfaces import Dialect

from app.core.db.rows import Result
from app.core.db.sqlexec import Compiler, Plan, bind, plain_rows

log = logging.getLogger(__name__)


class Probe:
    """Instrumentation (benches, statement-budget tests), called only when registered in
    `PROBES`; subclasses override what they count."""

    def statement(self, txn: Txn, sql: str, args: Any, seconds: float) -> None:
        """A statement ran (BEGIN included; COMMIT is `commit`)."""

    def commit(self, txn: Txn) -> None:
        """`txn` committed (`txn.wrote`: a statement of it wrote)."""

    def rollback(self, txn: Txn) -> None:
        """`txn` rolled back."""

    def connected(self) -> None:
        """The pool opened a new database connection."""


# Instrumentation only (benches, the statement-budget test): process-wide.
PROBES: list[Probe] = []

# What runs in a transaction just before its COMMIT (given to `Database`).
CommitHook = Callable[["Txn"], Awaitable[None]]


class Txn:
    """A unit of work on `connection`; `app/core/db/database.py` begins and ends it."""

    def __init__(
        self,
        connection: Any,
        compiler: Compiler,
        *,
        write: bool,
        info: dict[str, Any],
        before_commit: Sequence[CommitHook] = (),
    ) -> None:
        self.connection = connection  # app/core/db/drivers/sqlite_conn.py or pg_conn.py
        self.compiler = compiler
        self.dialect: Dialect = compiler.dialect
        self.write = write
        self.info = info
        self.before_commit = before_commit
        self.wrote = False  # a statement that writes ran (for probes)
        self._pending: list[Any] = []
        self._after_commit: list[Callable[[], None]] = []
        self._savepoints = 0

    def on_commit(self, fn: Callable[[], None]) -> None:
        """Call `fn` once this transaction has committed (never if it rolls back)."""
        self._after_commit.append(fn)

    async def execute(
        self,
        stmt: Any,
        params: Mapping[str, object] | Sequence[Mapping[str, object]] | None = None,
    ) -> Result:
        """Run `stmt` once, or once per parameter set if `params` is a list."""
        if params is not None and not isinstance(params, Mapping):
            return await self._execute_many(stmt, list(params))
        plan = self.compiler.plan(stmt, params or (), False)
        self._may(plan)
        sql, args = bind(plan, params)
        rows, count, names = await self._run(sql, args, plan.returns_rows)
        if rows is None:
            return Result([], count)
        if plan.reader is None:  # a textual statement: its rows as the driver named them
            return Result(plain_rows(rows, names), count)
        return Result(plan.reader.rows(rows), count)

    async def _execute_many(self, stmt: Any, params: list[Mapping[str, object]]) -> Result:
        if not params:
            return Result([], 0)
        plan = self.compiler.plan(stmt, params[0].keys(), len(params) > 1)
        self._may(plan)
        if len(params) == 1:
            sql, args = bind(plan, params[0])
            _, count, _names = await self._run(sql, args, plan.returns_rows)
            return Result([], count)
        if plan.returns_rows or plan.expanding:
            raise ValueError("RETURNING or an expanding IN cannot run for many parameter sets")
        many = [bind(plan, p)[1] for p in params]
        t0 = time.perf_counter()
        try:
            count = await self.connection.executemany(plan.sql, many)
        except Exception as err:
            raise self.connection.translate(err, plan.sql, many) from err
        self._saw(plan.sql, many, t0)
        return Result([], count)

    def _may(self, plan: Plan) -> None:
        """A read transaction never writes: on PostgreSQL it has no BEGIN, so its
        statements would each commit on their own."""
        if plan.writes and not self.write:
            raise RuntimeError("a write in a read transaction: use Database.transaction()")

    async def _run(
        self, sql: str, args: Sequence[Any], returns_rows: bool
    ) -> tuple[Any, int, tuple[str, ...]]:
        t0 = time.perf_counter()
        try:
            out = await self.connection.execute(sql, args, returns_rows)
        except Exception as err:
            raise self.connection.translate(err, sql, args) from err
        self._saw(sql, args, t0)
        return out  # type: ignore[no-any-return]

    def _saw(self, sql: str, args: Any, t0: float) -> None:
        if not self.wrote and not sql.lstrip()[:6].upper().startswith(_READS):
            self.wrote = True
        if PROBES:
            seen(self, sql, args, time.perf_counter() - t0)

    async def raw(self, sql: str) -> None:
        """A statement of no parameters and no rows (SAVEPOINT and the like)."""
        await self._run(sql, (), False)

    def add(self, obj: Any) -> None:
        """A new mapped object, inserted at the next `flush()` (or before COMMIT)."""
        self._pending.append(obj)

    async def flush(self) -> None:
        pending, self._pending = self._pending, []
        for obj in pending:
            await self._insert(obj)

    async def _insert(self, obj: Any) -> None:
        """One INSERT of every column the object holds; a missing autoincrement key is
        read back (RETURNING) and set on it, as the ORM's flush does."""
        mapper = inspect(type(obj))
        values: dict[str, Any] = {}
        for prop in mapper.column_attrs:
            col = prop.columns[0]
            value = obj.__dict__.get(prop.key)
            if value is None and (col.default is not None or col.primary_key):
                continue  # the column's default, or the database's key
            values[col.key] = value
        stmt = _inserts(mapper.local_table)
        missing = [c for c in mapper.primary_key if c.key not in values]
        if not missing:
            await self.execute(stmt, values)
            return
        row = (await self.execute(stmt.returning(*missing), values)).one()
        for col, value in zip(missing, row, strict=True):
            setattr(obj, mapper.get_property_by_column(col).key, value)

    async def stream(self, stmt: Any, params: dict[str, Any] | None = None) -> AsyncIterator[Any]:
        """Every row, read in chunks."""
        plan = self.compiler.plan(stmt, params or (), False)
        sql, args = bind(plan, params)
        reader = plan.reader
        assert reader is not None, "stream needs a statement that returns rows"

        async def values() -> AsyncIterator[Any]:
            try:
                async for chunk in self.connection.stream(sql, args):
                    for row in reader.rows(chunk):
                        yield row
            except Exception as err:
                raise self.connection.translate(err, sql, args) from err

        return values()

    @asynccontextmanager
    async def begin_nested(self) -> AsyncIterator[Txn]:
        """A savepoint: an exception inside rolls back to it, and is raised on."""
        if not self.connection.in_transaction:
            await self.raw("BEGIN")  # PostgreSQL: a read begins lazily
        self._savepoints += 1
        name = f"jobgate_sp_{self._savepoints}"
        await self.raw(f"SAVEPOINT {name}")
        try:
            yield self
        except BaseException:
            with contextlib.suppress(Exception):
                await self.raw(f"ROLLBACK TO SAVEPOINT {name}")
            raise
        await self.raw(f"RELEASE SAVEPOINT {name}")

    async def prepare_commit(self) -> None:
        """Just before COMMIT: flush, then the `before_commit` hooks, only in a transaction
        that writes (opened to write, or a statement of it wrote): a read commits as it is."""
        await self.flush()
        if self.write or self.wrote:
            for hook in self.before_commit:
                await hook(self)

    def committed(self) -> None:
        """After COMMIT: the probes, then the callbacks given to `on_commit`."""
        for probe in PROBES:
            probe.commit(self)
        hooks, self._after_commit = self._after_commit, []
        for fn in hooks:
            try:
                fn()
            except Exception:  # telemetry must never break a committed write
                log.exception("after-commit hook failed")

    def rolled_back(self) -> None:
        """After a rollback: nothing queued survives it."""
        self._after_commit.clear()
        self._pending.clear()
        for probe in PROBES:
            probe.rollback(self)


# Statements that write nothing (for `Txn.wrote`, which probes count).
_READS = ("SELECT", "SAVEPO", "RELEAS", "ROLLBA", "BEGIN")


def seen(txn: Txn, sql: str, args: Any, seconds: float) -> None:
    """Tell the probes about one statement (BEGIN included, as SQLAlchemy's events did)."""
    for probe in PROBES:
        probe.statement(txn, sql, args, seconds)


_INSERTS: dict[Any, Any] = {}


def _inserts(table: Any) -> Any:
    """One `insert(table)` per table, built once (its cache key is memoized on it)."""
    stmt = _INSERTS.get(table)
    if stmt is None:
        stmt = _INSERTS[table] = insert(table)
    return stmt
