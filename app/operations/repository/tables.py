"""The tables this package owns, how an `operations` row becomes an `Operation`, and the
fence a lease holder writes under."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, select

from app.core.db.row_table import table_of
from app.operations.domain.models import HistoryEntry, OperationTable, ResultItem
from app.operations.domain.operation import Operation

OPS = table_of(OperationTable)
HIST = table_of(HistoryEntry)
ITEMS = table_of(ResultItem)

# Every column of `operations`, in table order: what `select_operations()` reads.
_KEYS: tuple[str, ...] = tuple(c.key for c in OPS.columns)


def select_operations() -> Select[Any]:
    """SELECT every column of `operations`; `operations_of()` turns its rows into
    `Operation`s."""
    return select(*OPS.columns)


def operation_of(row: Sequence[Any]) -> Operation:
    """The `Operation` of one row of `select_operations()` (values already converted)."""
    return Operation(**dict(zip(_KEYS, row, strict=True)))


def operations_of(rows: Iterable[Sequence[Any]]) -> list[Operation]:
    return [operation_of(r) for r in rows]


def operation_values(op: Operation) -> dict[str, Any]:
    """Every column's value of `op`, by column key, as an INSERT takes them."""
    return {k: getattr(op, k) for k in _KEYS}


@dataclass(frozen=True)
class Fence:
    """Who may write: the lease holder's owner id and the token its claim received."""

    owner: str
    token: int
