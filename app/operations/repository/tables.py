"""The tables this package owns, and the fence a lease holder writes under."""

from __future__ import annotations

from dataclasses import dataclass

from app.operations.domain.models import HistoryEntry, Operation, ResultItem

OPS = Operation.__table__  # type: ignore[attr-defined]
HIST = HistoryEntry.__table__  # type: ignore[attr-defined]
ITEMS = ResultItem.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Fence:
    """Who may write: the lease holder's owner id and the token its claim received."""

    owner: str
    token: int
