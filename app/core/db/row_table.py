"""Tables declared once, and typed access to every table.

A table read on a hot path is declared as the slotted dataclass of its row: each field
is a column, `column(...)` carries the column's SQL options (what `sqlmodel.Field`
takes), and `table_model` builds the SQLModel table class from it, so Alembic and the
metadata see an ordinary SQLModel table and a column is written in one place. Reads
build the dataclass from a row (a few microseconds; a mapped or pydantic instance costs
several times that, docs/performance.md).

`table_of` is a table model's `Table`, typed (SQLAlchemy's `inspect` of the mapped class).
"""

from __future__ import annotations

import dataclasses
from typing import Any, get_type_hints

from sqlalchemy import Table, inspect
from sqlmodel import Field, SQLModel

_COLUMN = "jobgate.column"


def column(default: Any = dataclasses.MISSING, **options: Any) -> Any:
    """A dataclass field that is also a column: `options` are `sqlmodel.Field`'s
    (`primary_key`, `index`, `sa_type`, `nullable`, ...)."""
    return dataclasses.field(default=default, metadata={_COLUMN: options})


def table_model(row: type[Any], name: str, *, args: tuple[Any, ...] = ()) -> type[SQLModel]:
    """The SQLModel table class of the dataclass `row`: its fields in order, as columns
    with their types, defaults and `column(...)` options, and `args` as `__table_args__`."""
    hints = get_type_hints(row)
    namespace: dict[str, Any] = {
        "__tablename__": name,
        "__table_args__": args,
        "__module__": row.__module__,
        "__doc__": f"The `{name}` table, declared by `{row.__qualname__}`.",
        "__annotations__": {},
    }
    for f in dataclasses.fields(row):
        namespace["__annotations__"][f.name] = hints[f.name]
        options = dict(f.metadata.get(_COLUMN, {}))
        if f.default is not dataclasses.MISSING:
            options["default"] = f.default
        namespace[f.name] = Field(**options)
    model: type[SQLModel] = type(f"{row.__name__}Table", (SQLModel,), namespace, table=True)
    return model


def table_of(model: type[SQLModel]) -> Table:
    """The `Table` a SQLModel table class maps."""
    table = inspect(model).local_table
    assert isinstance(table, Table), model
    return table
