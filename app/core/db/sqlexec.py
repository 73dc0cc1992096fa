"""SQLAlchemy Core statements, compiled by SQLAlchemy's public API, run on a driver.

The repositories write SQLAlchemy statements; this module turns one into what the
driver (app/core/db/drivers/sqlite_conn.py, app/core/db/drivers/pg_conn.py) runs,
through SQLAlchemy's public surface only:
- `ClauseElement.compile(dialect=...)`: the SQL and the order of its parameters
  (`positiontup`), its bound parameters (`binds`);
- `Compiled.construct_params()` and, for an expanding IN, `construct_expanded_state()`:
  the values of one execution;
- `TypeEngine.dialect_impl(dialect).bind_processor()` / `.result_processor()`: the
  conversions SQLAlchemy applies to every value in and out;
- a statement's `exported_columns` and `column_descriptions`: what its rows hold, and
  whether they are instances of one mapped class (built by the class's constructor).

Compiling costs about 0.4 ms, so a compiled statement is kept per statement object:
the statements the hot path runs are built once, at import, with their values bound
by name (`bindparam("k_id")`); a statement built per call is compiled per call.
`tests/integration/test_sqlexec.py` compares what this sends and reads back with
what SQLAlchemy's own engine sends and its ORM reads, on both back-ends.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Float, exc, inspect
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.orm import configure_mappers
from sqlalchemy.types import NumericCommon

from app.core.db.rows import Row

CACHE_SIZE = 500  # compiled statements kept per dialect (SQLAlchemy's own default)

Processor = Callable[[Any], Any]


class Reader:
    """How to turn a statement's driver rows into rows or instances."""

    __slots__ = ("processors", "row_type", "entity")

    def __init__(self, columns: Sequence[Any], dialect: Dialect, entity: type | None) -> None:
        procs = tuple(
            c.type.dialect_impl(dialect).result_processor(dialect, _type_code(dialect, c.type))
            for c in columns
        )
        self.processors: tuple[Processor | None, ...] | None = procs if any(procs) else None
        index: dict[Any, int] = {}
        keys = []
        for i, c in enumerate(columns):
            key = c.key if c.key is not None else f"column_{i}"
            keys.append(key)
            index.setdefault(key, i)
            with contextlib.suppress(TypeError):  # unhashable: reachable by name only
                index.setdefault(c, i)
        self.row_type: type[Row] = type(
            "Row", (Row,), {"__slots__": (), "_index": index, "_keys": tuple(keys)}
        )
        self.entity = _Loader(entity, columns) if entity is not None else None

    def rows(self, raw: Sequence[Sequence[Any]]) -> list[Any]:
        procs = self.processors
        if procs is not None:
            raw = [
                tuple(v if p is None or v is None else p(v) for p, v in zip(procs, r, strict=True))
                for r in raw
            ]
        if self.entity is not None:
            build = self.entity.build
            return [(build(r),) for r in raw]
        make = self.row_type
        return [make(r) for r in raw]


# What the driver reports as a column's type, where a dialect's result processor
# asks (asyncpg's numeric types): the PostgreSQL type the column's own type is stored
# as. Only columns of jobgate's tables are read this way (FLOAT is double precision).
_PG_FLOAT, _PG_NUMERIC = 701, 1700


def _type_code(dialect: Dialect, type_: Any) -> int | None:
    if dialect.name != "postgresql" or not isinstance(type_, NumericCommon):
        return None
    return _PG_FLOAT if isinstance(type_, Float) else _PG_NUMERIC


class _Loader:
    """Instances of one mapped class from its table's columns, through its constructor
    (a SQLModel table model does not validate there)."""

    __slots__ = ("cls", "keys")

    def __init__(self, cls: type, columns: Sequence[Any]) -> None:
        configure_mappers()
        mapper: Any = inspect(cls)
        self.cls = cls
        self.keys = tuple(mapper.get_property_by_column(c).key for c in columns)

    def build(self, values: Sequence[Any]) -> Any:
        return self.cls(**dict(zip(self.keys, values, strict=True)))


class Plan:
    """A compiled statement and what running it needs."""

    __slots__ = (
        "stmt",
        "compiled",
        "sql",
        "positions",
        "binds",
        "expanding",
        "reader",
        "returns_rows",
        "defaults",
        "writes",
    )

    def __init__(self, stmt: Any, dialect: Dialect, keys: Iterable[str], many: bool) -> None:
        compiled: Any = stmt.compile(
            dialect=dialect, column_keys=sorted(keys), for_executemany=many
        )
        if not compiled.positional:
            raise exc.ArgumentError(f"{dialect.name}: sqlexec needs a positional paramstyle")
        self.stmt = stmt  # held: the cache is keyed by this object
        self.compiled = compiled
        self.sql: str = compiled.string
        self.positions: tuple[str, ...] = tuple(compiled.positiontup or ())
        self.binds: dict[str, Processor] = {}
        for name, param in compiled.binds.items():
            proc = param.type.dialect_impl(dialect).bind_processor(dialect)
            if proc is not None:
                self.binds[name] = proc
        self.expanding = bool(compiled.literal_execute_params or compiled.post_compile_params)
        self.writes = bool(compiled.isinsert or compiled.isupdate or compiled.isdelete)
        columns = list(getattr(stmt, "exported_columns", ()))
        self.returns_rows = bool(columns) or _returns_rows(self.sql)
        # Columns left out of an INSERT whose default SQLAlchemy computes in Python
        # (scalars and plain callables; jobgate's tables have only scalar ones).
        self.defaults = tuple((c.key, c.default) for c in compiled.insert_prefetch)
        if compiled.update_prefetch:
            raise exc.ArgumentError("sqlexec: onupdate column defaults are not supported")
        # A textual statement has no columns declared: `plain_rows` names them.
        self.reader = Reader(columns, dialect, _entity_of(stmt)) if columns else None


def _returns_rows(sql: str) -> bool:
    """Whether a textual statement answers rows (PostgreSQL needs to know beforehand)."""
    head = sql.lstrip()[:8].upper()
    return head.startswith(("SELECT", "WITH", "VALUES", "PRAGMA", "SHOW", "EXPLAIN")) or (
        " RETURNING " in sql.upper()
    )


_PLAIN: dict[tuple[str, ...], type[Row]] = {}


def plain_rows(raw: Sequence[Sequence[Any]], names: tuple[str, ...]) -> list[Row]:
    """Rows of a textual statement, named as the driver named their columns."""
    row_type = _PLAIN.get(names)
    if row_type is None:
        index = {n: i for i, n in reversed(list(enumerate(names)))}
        attrs = {"__slots__": (), "_index": index, "_keys": names}
        row_type = _PLAIN[names] = type("Row", (Row,), attrs)
    return [row_type(r) for r in raw]


def _entity_of(stmt: Any) -> type | None:
    """The mapped class of `select(Model)` (one entity, nothing else), or None."""
    descriptions = getattr(stmt, "column_descriptions", None)
    if not descriptions or len(descriptions) != 1:
        return None
    d = descriptions[0]
    cls = d.get("entity")
    if cls is not None and d.get("expr") is cls and isinstance(cls, type):
        return cls
    return None


class Compiler:
    """Plans for one dialect, kept per statement object (and parameter names)."""

    def __init__(self, dialect: Dialect, size: int = CACHE_SIZE) -> None:
        self.dialect = dialect
        self.cache: OrderedDict[Any, Plan] = OrderedDict()
        self.size = size
        self.compiles = 0  # statements compiled (benches, the statement-budget test)

    def plan(self, stmt: Any, keys: Iterable[str], many: bool) -> Plan:
        names = tuple(sorted(keys))
        key = (id(stmt), names, many)
        plan = self.cache.get(key)
        if plan is None or plan.stmt is not stmt:
            self.compiles += 1
            plan = Plan(stmt, self.dialect, names, many)
            self.cache[key] = plan
            if len(self.cache) > self.size:  # least recently used first
                self.cache.popitem(last=False)
        else:
            self.cache.move_to_end(key)
        return plan


def bind(plan: Plan, params: Mapping[str, object] | None) -> tuple[str, tuple[Any, ...]]:
    """The SQL and positional arguments for one set of parameters."""
    compiled = plan.compiled
    if plan.defaults:
        params = dict(params or {})
        for key, default in plan.defaults:
            params[key] = default.arg if default.is_scalar else default.arg(None)
    procs = plan.binds
    sql, positions = plan.sql, plan.positions
    if plan.expanding:
        expanded = compiled.construct_expanded_state(params, escape_names=False)
        sql, positions, values = expanded.statement, expanded.positiontup, expanded.parameters
        if expanded.processors:
            procs = {**procs, **expanded.processors}
    else:
        values = compiled.construct_params(params, escape_names=False)
    if procs:
        args = tuple(procs[k](values[k]) if k in procs else values[k] for k in positions)
    else:
        args = tuple(values[k] for k in positions)
    return sql, args
