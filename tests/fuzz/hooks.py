"""schemathesis hooks for `make fuzz` (loaded through SCHEMATHESIS_HOOKS).

Two things a generator cannot know, made true of every generated create:
- An Idempotency-Key names one logical operation. The generator draws keys from
  a small space and repeats them with other bodies, which the contract answers
  422 idempotency_key_reused. A valid key gets a unique suffix (it stays valid;
  a key that is invalid on purpose is left as it is).
- No `callback_url`: whether one is accepted depends on what the generated host
  resolves to on this machine (the SSRF guard resolves it), and delivering
  callbacks to random hosts would send the fuzz run out onto the network. The
  callback rules have their own tests.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import schemathesis

CREATE = "POST /v1/operations"
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
    return case
