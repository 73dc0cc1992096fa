"""`Operation` (the row the code moves) and `OperationTable` (the columns) stay in step:
the same fields in the same order, the same scalar defaults, and types that agree."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, get_type_hints

from app.operations.domain import operation as operation_module
from app.operations.domain.models import OperationTable
from app.operations.domain.operation import Operation
from app.operations.repository.tables import OPS, operation_of, operation_values


def _fields() -> list[dataclasses.Field[Any]]:
    return list(dataclasses.fields(Operation))


def test_fields_are_the_table_columns_in_order() -> None:
    assert [f.name for f in _fields()] == [c.key for c in OPS.columns]


def test_required_fields_and_defaults_match_the_model() -> None:
    model = OperationTable.model_fields
    for f in _fields():
        declared = model[f.name]
        if declared.is_required():
            assert f.default is dataclasses.MISSING, f.name
        else:
            assert f.default == declared.default, f.name


def test_annotations_match_the_model() -> None:
    ours = get_type_hints(Operation, vars(operation_module))
    for name, declared in OperationTable.model_fields.items():
        assert _norm(ours[name]) == _norm(declared.annotation), name


def _norm(t: Any) -> Any:
    if isinstance(t, types.UnionType) or typing.get_origin(t) is typing.Union:
        return frozenset(typing.get_args(t))
    return t


def test_a_row_round_trips_through_its_values() -> None:
    row = [object() for _ in OPS.columns]
    op = operation_of(row)
    assert list(operation_values(op).values()) == row
