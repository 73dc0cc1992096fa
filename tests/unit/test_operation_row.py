"""`Operation` declares the `operations` table once: `OperationTable` is built from its
fields (app/core/db/row_table.py), in order, with their types, defaults and column
options, and a row read back is the same row."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Integer
from sqlalchemy.dialects import sqlite
from sqlmodel import SQLModel

from app.core.db.row_table import column, table_model, table_of
from app.core.db.types import UTCDateTime
from app.operations.domain.operation import Operation
from app.operations.repository.tables import OPS, operation_of, operation_values


def test_fields_are_the_table_columns_in_order() -> None:
    assert [f.name for f in dataclasses.fields(Operation)] == [c.key for c in OPS.columns]


def test_types_defaults_and_options_become_the_columns() -> None:
    @dataclasses.dataclass(slots=True, kw_only=True)
    class Thing:
        id: str = column(primary_key=True)
        count: int = column(0)
        seen_at: datetime | None = column(None, sa_type=UTCDateTime, nullable=True, index=True)
        data: Any = column(sa_type=JSON)

    table = table_of(table_model(Thing, "things_for_the_test"))
    SQLModel.metadata.remove(table)  # the schema under test stays the migrations' own
    id_, count, seen_at, data = table.columns
    assert id_.primary_key and id_.type.compile(dialect=sqlite.dialect()) == "VARCHAR"
    assert isinstance(count.type, Integer) and not count.nullable and count.default.arg == 0
    assert isinstance(seen_at.type, UTCDateTime) and seen_at.nullable and seen_at.index
    assert isinstance(data.type, JSON)
    assert Thing(id="a", data=1).count == 0  # the same default on the row


def test_a_row_round_trips_through_its_values() -> None:
    row = [object() for _ in OPS.columns]
    op = operation_of(row)
    assert list(operation_values(op).values()) == row
