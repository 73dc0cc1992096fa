"""Result rows and results, as the repositories read them (SQLAlchemy's names and
shapes: `scalars()`, `scalar_one_or_none()`, `row.column`, `row._mapping[...]`), filled
by `app/core/db/sqlexec.py` from a driver's rows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import exc


class Mapping:
    """A row's values by column name (or column object), like SQLAlchemy's `RowMapping`."""

    __slots__ = ("_row", "_index", "_keys")

    def __init__(self, row: Row, index: dict[Any, int], keys: tuple[str, ...]) -> None:
        self._row = row
        self._index = index
        self._keys = keys

    def __getitem__(self, key: Any) -> Any:
        return self._row[self._index[key]]

    def get(self, key: Any, default: Any = None) -> Any:
        i = self._index.get(key)
        return default if i is None else self._row[i]

    def keys(self) -> list[str]:
        return list(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class Row(tuple[Any, ...]):
    """One result row: a tuple, its columns also as attributes and through `_mapping`.

    A subclass per statement carries `_index` (name or column -> position) and `_keys`.
    """

    __slots__ = ()
    _index: dict[Any, int] = {}
    _keys: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[self._index[name]]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def _mapping(self) -> Mapping:
        return Mapping(self, self._index, self._keys)

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._keys, self, strict=True))


class _Values:
    """A fetched list: every value, the first, exactly one, one or none."""

    __slots__ = ("_values",)

    def __init__(self, values: list[Any]) -> None:
        self._values = values

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def all(self) -> list[Any]:
        return list(self._values)

    def first(self) -> Any:
        return self._values[0] if self._values else None

    def one(self) -> Any:
        return _one(self._values)

    def one_or_none(self) -> Any:
        return _one_or_none(self._values)


class Scalars(_Values):
    """The first column of every row (the instance, for `select(Model)`)."""

    __slots__ = ()


class Result(_Values):
    """What a statement returned: its rows (all fetched), and the rows it affected."""

    __slots__ = ("rowcount",)

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        super().__init__(rows)
        self.rowcount = rowcount

    def scalars(self) -> Scalars:
        return Scalars([r[0] for r in self._values])

    def scalar(self) -> Any:
        return self._values[0][0] if self._values else None

    def scalar_one(self) -> Any:
        return _one(self._values)[0]

    def scalar_one_or_none(self) -> Any:
        row = _one_or_none(self._values)
        return None if row is None else row[0]


def _one(values: list[Any]) -> Any:
    if not values:
        raise exc.NoResultFound("No row was found when one was required")
    if len(values) > 1:
        raise exc.MultipleResultsFound("Multiple rows were found when exactly one was required")
    return values[0]


def _one_or_none(values: list[Any]) -> Any:
    if len(values) > 1:
        raise exc.MultipleResultsFound("Multiple rows were found when one or none was required")
    return values[0] if values else None
