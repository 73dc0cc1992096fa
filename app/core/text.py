"""Text the gateway can store and show: no NUL, no lone surrogates.

PostgreSQL refuses NUL in text, and no UTF-8 encoder can write a lone UTF-16
surrogate (Python's `json.loads` happily makes one from `"\\udfff"`). Pure.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"  # what `degrade` shows instead of an unencodable character


def problem(text: str) -> str | None:
    """Why `text` cannot be stored, or None when it can: `nul` or `unpaired_surrogate`."""
    if "\x00" in text:
        return "nul"
    if _SURROGATE.search(text):
        return "unpaired_surrogate"
    return None


def degrade(value: Any) -> Any:
    """`value` with every lone surrogate shown as U+FFFD; the same object if it has none.

    For rows written before the intake checks existed: a response must still encode.
    JSON-shaped values only (what a body or a JSON column holds); anything the JSON
    encoder cannot walk is returned as it is.
    """
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value) if _SURROGATE.search(value) else value
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return value
    if not _SURROGATE.search(text):
        return value
    return json.loads(_SURROGATE.sub(REPLACEMENT, text))
