"""The shapes of what identifies an operation: its id, and the caller's Idempotency-Key.

One definition each, for the API's checks, its OpenAPI patterns and the MCP tools.
"""

from __future__ import annotations

import re

# "op_" and a ULID in Crockford base32, as `service.new_operation_id` makes them.
OPERATION_ID = r"^op_[0-9A-HJKMNP-TV-Z]{26}$"
# Printable ASCII, no space at either end: what an HTTP header carries unchanged.
IDEMPOTENCY_KEY = r"^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$"

_OPERATION_ID = re.compile(OPERATION_ID)
_IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY)


def is_operation_id(value: str) -> bool:
    """Could an operation have this id? (No lookup: the shape only.)"""
    return _OPERATION_ID.fullmatch(value) is not None


def is_idempotency_key(value: str) -> bool:
    """Printable ASCII without leading or trailing spaces (the length is checked apart)."""
    return _IDEMPOTENCY_KEY.fullmatch(value) is not None
