"""The one determinism convention of the two batch fakes (OpenAI Batch, Anthropic Batches).

Both APIs take a list of ordinary model requests and promise an answer within a
24-hour window. The fakes read two documented fields of each request and nothing
else:

- `model`: a model whose name starts with `fail` is refused by the model endpoint
  (OpenAI: a 404 `model_not_found` line in the error file; Anthropic: an `errored`
  result), so "all failed" and "some failed" batches are built from ordinary input.
- `max_tokens` (OpenAI also `max_completion_tokens` / `max_output_tokens`): the work a
  request needs, one hour per started 1,024 tokens (at least one). One status read
  (or one step of `POST /_fake/advance`) is one hour of the batch's clock. A request
  needing more than 24 hours is never done: the batch expires with it unprocessed.

Results come out in an order that is stable but not the input order (both APIs say
the order is not guaranteed), so a client that relies on order fails against the fake.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

WINDOW_HOURS = 24  # the completion window both APIs document
TOKENS_PER_HOUR = 1024
FAIL_PREFIX = "fail"
T = TypeVar("T")


def hours_needed(params: Mapping[str, Any]) -> int:
    """How many hours (status reads) one request takes, from its token budget."""
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = params.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return max(1, math.ceil(value / TOKENS_PER_HOUR))
    return 1


def refused(params: Mapping[str, Any]) -> bool:
    """Whether the model endpoint refuses this request (its model name starts with `fail`)."""
    model = params.get("model")
    return isinstance(model, str) and model.startswith(FAIL_PREFIX)


def result_order(items: Sequence[T], key: Any) -> list[T]:
    """`items` in a stable order unrelated to the input order (sorted by a hash of the key)."""
    return sorted(items, key=lambda item: hashlib.sha256(str(key(item)).encode()).hexdigest())


def fake_text(seed: str) -> str:
    """A short deterministic answer text for one request."""
    return f"Fake answer {hashlib.sha256(seed.encode()).hexdigest()[:12]}."
