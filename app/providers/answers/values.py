"""Plain values read out of provider answers: JSON values coerced to what jobgate keeps,
and links followed against the request that gave them. Pure."""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urljoin

from app.providers.expressions.pointers import MISSING


def as_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else None


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, float) and value.is_integer() else None


def as_seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def present(value: Any) -> Any:
    """A pointer's value, with ``MISSING`` (no such member) read as ``None``."""
    return None if value is MISSING else value


def follow(base: str, link: str) -> str:
    """A link from a provider answer (absolute, or relative to the request that gave it)."""
    return urljoin(base, link)
