"""schemathesis hooks for `make fuzz` (loaded through SCHEMATHESIS_HOOKS).

Three things a generator cannot know:
- An Idempotency-Key names one logical operation. The generator draws keys from
  a small space and repeats them with other bodies, which the contract answers
  422 idempotency_key_reused. A valid key gets a unique suffix (it stays valid;
  a key that is invalid on purpose is left as it is).
- No `callback_url`: whether one is accepted depends on what the generated host
  resolves to on this machine (the SSRF guard resolves it), and delivering
  callbacks to random hosts would send the fuzz run out onto the network. The
  callback rules have their own tests.
- A list cursor is opaque: only one the API handed out is valid. A generated one,
  however well-formed, is forged (400 invalid_cursor, the schema says so, and
  test_forged_cursors covers it), so a schema-valid case does not carry one unless
  it is a cursor the API could have issued (the stateful phase follows real ones).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import schemathesis

from app.core.http.errors import ApiError
from app.operations.contract.cursors import decode_list_cursor

CREATE = "POST /v1/operations"
LIST = "GET /v1/operations"
VALID_KEY = re.compile(r"[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?")  # the documented pattern
MAX_KEY = 255


def _is_create(context: schemathesis.HookContext) -> bool:
    return context.operation is not None and context.operation.label == CREATE


@schemathesis.hook
def filter_case(context: schemathesis.HookContext, case: schemathesis.Case) -> bool:
    body: Any = case.body
    return not (_is_create(context) and isinstance(body, dict) and body.get("callback_url"))


@schemathesis.hook
def map_case(context: schemathesis.HookContext, case: schemathesis.Case) -> schemathesis.Case:
    key = (case.headers or {}).get("Idempotency-Key")
    if _is_create(context) and isinstance(key, str) and VALID_KEY.fullmatch(key):
        suffix = "-" + uuid.uuid4().hex
        case.headers["Idempotency-Key"] = key[: MAX_KEY - len(suffix)] + suffix  # type: ignore[index]
    cursor = (case.query or {}).get("cursor")
    if _is_list(context) and isinstance(cursor, str) and _positive(case) and _forged(cursor):
        del case.query["cursor"]  # type: ignore[union-attr]
    return case


def _is_list(context: schemathesis.HookContext) -> bool:
    return context.operation is not None and context.operation.label == LIST


def _positive(case: schemathesis.Case) -> bool:
    meta = case.meta
    return meta is None or meta.generation.mode.is_positive


def _forged(cursor: str) -> bool:
    try:
        decode_list_cursor(cursor)
    except ApiError:
        return True
    return False
