"""Column types shared by every table."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy.types import DateTime, String, TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """Stores UTC naive timestamps and always hands back aware UTC datetimes.

    SQLite has no time zone type; storing naive UTC on both back-ends keeps
    comparisons (`next_poll_at <= :now`) identical everywhere.
    """

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC)


class StrEnumType(TypeDecorator[Any]):
    """A StrEnum stored as its plain string value, handed back as the enum member.

    A VARCHAR in the schema (no database enum type to migrate when a value is
    added); the model's attribute is always the enum, never a bare string.
    """

    impl = String
    cache_ok = True

    def __init__(self, enum_cls: type[StrEnum]) -> None:
        super().__init__()
        self.enum_cls = enum_cls

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else self.enum_cls(value).value

    def process_result_value(self, value: str | None, dialect: Any) -> Any:
        return None if value is None else self.enum_cls(value)
