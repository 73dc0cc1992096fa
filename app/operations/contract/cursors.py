"""Cursors and resume tokens, parsed strictly: a forged one is `400 invalid_cursor`.

Three kinds, each opaque to clients and checked character by character before
any value reaches a query: the list cursor (base64url of `[created_at, id]`),
the errors-page cursor (an item position) and SSE's `Last-Event-ID` (a history
row id). Nothing here can overflow a database integer or raise anything but
`ApiError`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import UTC, datetime

from app.core.http.errors import ApiError
from app.operations.domain.operation import Operation

MAX_CURSOR_CHARS = 200  # a real list cursor is about 80
MAX_POSITION = 2**31 - 1  # result_items.position is a 32-bit integer
MAX_EVENT_ID = 2**63 - 1  # operation_history.id is a 64-bit integer
_B64URL = re.compile(r"[A-Za-z0-9_-]+")
LIST_CURSOR = rf"^[A-Za-z0-9_-]{{1,{MAX_CURSOR_CHARS}}}$"  # its form, as OpenAPI states it
_DIGITS = re.compile(r"0|[1-9][0-9]*")  # ASCII only; `str.isdigit` also accepts "²"
_OPERATION_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")


def invalid(what: str = "cursor") -> ApiError:
    return ApiError(
        400,
        "invalid_cursor",
        f"The {what} is not one this API returned; start again without it.",
    )


def encode_list_cursor(op: Operation) -> str:
    raw = json.dumps([op.created_at.isoformat(), op.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_list_cursor(cursor: str) -> tuple[datetime, str]:
    """(created_at, id) of the last row of the previous page."""
    if len(cursor) > MAX_CURSOR_CHARS or not _B64URL.fullmatch(cursor):
        raise invalid()
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = json.loads(raw.decode("utf-8"))
    except (ValueError, binascii.Error, RecursionError):
        raise invalid() from None
    if not (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, str) for v in value)
        and _OPERATION_ID.fullmatch(value[1])
    ):
        raise invalid()
    try:
        created = datetime.fromisoformat(value[0])
        if created.tzinfo is None:  # every cursor we hand out is UTC-aware
            raise invalid()
        return created.astimezone(UTC), value[1]
    except (ValueError, OverflowError):  # e.g. year 1 at +05:00 has no UTC time
        raise invalid() from None


def _bounded_int(text: str, limit: int, what: str) -> int:
    if len(text) > len(str(limit)) or not _DIGITS.fullmatch(text):
        raise invalid(what)
    value = int(text)
    if value > limit:
        raise invalid(what)
    return value


def decode_position(cursor: str) -> int:
    """The errors-page cursor: the last position already returned."""
    return _bounded_int(cursor, MAX_POSITION, "cursor")


def decode_event_id(value: str) -> int:
    """SSE `Last-Event-ID`: the last history row id the client saw."""
    return _bounded_int(value, MAX_EVENT_ID, "Last-Event-ID")
