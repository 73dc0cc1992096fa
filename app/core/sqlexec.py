"""SQLAlchemy Core statements, compiled by SQLAlchemy, run on a bare driver connection.

docs/history/benchmarks.md: the gateway's CPU went to SQLAlchemy's execution machinery, not
to SQL. A
read of one row through an `AsyncSession` cost about 335 us of CPU on SQLite and 900 us
on PostgreSQL; the same statement on the driver alone, 12 us and 60 us. Most of the
difference is the session, the async adaptation (a greenlet per call), the pool, the
execution context and the ORM's loading. So the repositories keep writing SQLAlchemy
statements, and SQLAlchemy still compiles them (with its own cache key, into its own
cache) and still converts every value (its bind and result processors for the
dialect), but what runs them is this module and `app/core/txn.py`.

What SQLAlchemy's `Connection` did and this module does instead, in the same way
(`DefaultExecutionContext._init_compiled` is the model):
- `plan()`: the compiled statement for these parameter names, from the cache;
- `bind()`: the positional arguments, with the bind processors applied; an
  "expanding" IN parameter rendered for its values;
- `Reader`: rows with the result processors applied, as tuples with attribute and
  `_mapping` access, or, for `select(Model)`, instances of the mapped class, built as
  the ORM's loader builds them (a new instance, its attribute dict filled).

It reaches under SQLAlchemy's public API (`_compile_w_cache`, `construct_params`,
`_bind_processors`, `_process_parameters_for_postcompile`, `_result_columns`): the
dependency pins the minor version, and `tests/unit/test_sqlexec.py` compares what
this module runs with what SQLAlchemy's own execution sends and returns.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import Float, exc, inspect
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.orm import configure_mappers
from sqlalchemy.sql.sqltypes import NumericCommon
from sqlalchemy.util import LRUCache

from app.core.rows import Row

CACHE_SIZE = 500  # compiled statements kept per dialect (SQLAlchemy's own default)

Processor = Callable[[Any], Any]


class Reader:
    """How to turn a statement's driver rows into rows or instances."""

    __slots__ = ("processors", "row_type", "entity")

    def __init__(self, compiled: Any, dialect: Dialect, entity: Any) -> None:
        columns = compiled._result_columns
        self.processors: tuple[Processor | None, ...] | None = tuple(
            c.type._cached_result_processor(dialect, _type_code(dialect, c.type)) for c in columns
        )
        if not any(self.processors):
            self.processors = None
        index: dict[Any, int] = {}
        for i, c in enumerate(columns):
            index.setdefault(c.keyname, i)
            for obj in c.objects:
                with contextlib.suppress(TypeError):  # unhashable: reachable by name only
                    index.setdefault(obj, i)
        keys = tuple(c.keyname for c in columns)
        self.row_type: type[Row] = type(
            "Row", (Row,), {"__slots__": (), "_index": index, "_keys": keys}
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
    """Instances of one mapped class from its table's columns, as the ORM loads them:
    a new instance (no `__init__`, no validation) whose attribute dict is filled."""

    __slots__ = ("new", "keys")

    def __init__(self, cls: Any, columns: Sequence[Any]) -> None:
        configure_mappers()
        mapper = inspect(cls)
        keys = []
        for c in columns:
            col = next((o for o in c.objects if hasattr(o, "table")), None)
            if col is None:
                raise exc.InvalidRequestError(f"{cls.__name__}: no column for {c.keyname!r}")
            keys.append(mapper.get_property_by_column(col).key)
        self.new = mapper.class_manager.new_instance
        self.keys = tuple(keys)

    def build(self, values: Sequence[Any]) -> Any:
        obj = self.new()
        obj.__dict__.update(zip(self.keys, values, strict=True))
        return obj


class Plan:
    """A compiled statement and what running it needs (kept on the compiled object)."""

    __slots__ = (
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

    def __init__(self, stmt: Any, compiled: Any, dialect: Dialect) -> None:
        if not compiled.positional:
            raise exc.ArgumentError(f"{dialect.name}: sqlexec needs a positional paramstyle")
        self.compiled = compiled
        self.sql: str = compiled.string
        self.positions: tuple[str, ...] = tuple(compiled.positiontup or ())
        self.binds: dict[str, Processor] = dict(compiled._bind_processors)
        self.expanding = bool(compiled.literal_execute_params or compiled.post_compile_params)
        self.writes = bool(compiled.isinsert or compiled.isupdate or compiled.isdelete)
        has_columns = bool(compiled._result_columns)
        self.returns_rows = has_columns or (compiled.isplaintext and _returns_rows(self.sql))
        # Columns left out of an INSERT whose default SQLAlchemy computes here (scalars
        # and plain callables; jobgate's tables have only scalar ones).
        prefetch = compiled.insert_prefetch
        key = compiled._within_exec_param_key_getter if prefetch else None
        self.defaults = tuple((key(c), c.default) for c in prefetch) if key else ()
        if compiled.update_prefetch:
            raise exc.ArgumentError("sqlexec: onupdate column defaults are not supported")
        # A textual statement has no columns declared: `plain_rows` names them.
        self.reader = Reader(compiled, dialect, _entity_of(stmt)) if has_columns else None


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


def _entity_of(stmt: Any) -> Any:
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
    """Plans for one dialect, cached by SQLAlchemy's cache key."""

    def __init__(self, dialect: Dialect, size: int = CACHE_SIZE) -> None:
        self.dialect = dialect
        self.cache: LRUCache[Any, Any] = LRUCache(size)

    def plan(self, stmt: Any, keys: Iterable[str], many: bool) -> tuple[Plan, Any, Any]:
        """(plan, the statement's own bound values, its collected parameters)."""
        compiled, extracted, collected, _hit = stmt._compile_w_cache(
            dialect=self.dialect,
            compiled_cache=self.cache,
            column_keys=sorted(keys),
            for_executemany=many,
        )
        plan: Plan | None = getattr(compiled, "_jobgate_plan", None)
        if plan is None:
            plan = Plan(stmt, compiled, self.dialect)
            compiled._jobgate_plan = plan
        return plan, extracted, collected


def bind(
    plan: Plan,
    params: dict[str, Any] | None,
    extracted: Any,
    collected: Any,
    group: int | None = None,
) -> tuple[str, tuple[Any, ...]]:
    """The SQL and positional arguments for one set of parameters."""
    compiled = plan.compiled
    values = compiled.construct_params(
        params,
        escape_names=False,
        _group_number=group,
        extracted_parameters=extracted,
        _collected_params=collected,
    )
    for key, default in plan.defaults:
        values[key] = default.arg if default.is_scalar else default.arg(None)
    procs = plan.binds
    sql, positions = plan.sql, plan.positions
    if plan.expanding:
        expanded = compiled._process_parameters_for_postcompile(values)
        sql, positions = expanded.statement, expanded.positiontup
        if expanded.processors:
            procs = {**procs, **expanded.processors}
    if procs:
        args = tuple(procs[k](values[k]) if k in procs else values[k] for k in positions)
    else:
        args = tuple(values[k] for k in positions)
    return sql, args
