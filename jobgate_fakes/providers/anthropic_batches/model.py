"""Anthropic Message Batch objects and their life, as plain data driven by status reads.

A batch is `in_progress` from its create. Each step is one hour (batchwork.py); it
ends (`ended`, `results_url` set) when every request's hours are spent, or at hour 24
with the unfinished requests `expired`. A cancel makes it `canceling`; the next step
ends it with the unfinished requests `canceled`. As the reference says, every count
but `processing` stays zero until the batch has ended.

Params are checked the way the Messages API checks them, per request and after the
create: a request without `model`, `max_tokens` or `messages` ends `errored` with an
`invalid_request_error`; only the batch envelope is refused at create time.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from jobgate_fakes.providers import batchwork
from jobgate_fakes.providers.base import now, rfc3339

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_REQUESTS = 100_000
REQUIRED_PARAMS = ("model", "max_tokens", "messages")


def new_id(prefix: str) -> str:
    """`msgbatch_01...`-style id: a prefix and 24 base62-ish characters."""
    alphabet = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    return prefix + "01" + "".join(secrets.choice(alphabet) for _ in range(22))


def envelope_problem(body: dict[str, Any]) -> str | None:
    """Why the create call itself is refused (400), or None."""
    requests = body.get("requests")
    if not isinstance(requests, list) or not requests:
        return "requests: Field required and must be a non-empty list"
    if len(requests) > MAX_REQUESTS:
        return f"requests: at most {MAX_REQUESTS} requests per batch"
    seen: set[str] = set()
    for i, item in enumerate(requests):
        if not isinstance(item, dict) or not isinstance(item.get("params"), dict):
            return f"requests.{i}.params: Field required"
        custom_id = item.get("custom_id")
        if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id):
            return f"requests.{i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
        if custom_id in seen:
            return f"requests.{i}.custom_id: Duplicate custom_id '{custom_id}' in batch"
        seen.add(custom_id)
    return None


@dataclass
class Item:
    """One request of a batch."""

    custom_id: str
    params: dict[str, Any]

    @property
    def hours(self) -> int:
        return batchwork.hours_needed(self.params)

    def error(self) -> tuple[str, str] | None:
        """(error type, message) when the Messages API would refuse these params."""
        missing = [k for k in REQUIRED_PARAMS if k not in self.params]
        if missing:
            return "invalid_request_error", f"{missing[0]}: Field required"
        if batchwork.refused(self.params):
            return "not_found_error", f"model: {self.params['model']}"
        return None


@dataclass
class MessageBatch:
    """One batch and the clock that moves it (`hours`, advanced by `step`)."""

    id: str
    items: list[Item]
    created_at: datetime = field(default_factory=now)
    status: str = "in_progress"
    hours: int = 0
    cancel_initiated_at: datetime | None = None
    ended_at: datetime | None = None
    outcomes: dict[str, str] = field(default_factory=dict)

    def cancel(self) -> bool:
        """Record a cancel; False once the batch has ended."""
        if self.status == "ended":
            return False
        if self.status == "in_progress":
            self.status, self.cancel_initiated_at = "canceling", now()
        return True

    def step(self) -> bool:
        """One hour passes; True when this step ended the batch."""
        if self.status == "ended":
            return False
        if self.status == "in_progress":
            self.hours += 1
            if any(i.hours > self.hours for i in self.items) and self.hours < 24:
                return False
        left = "canceled" if self.status == "canceling" else "expired"
        for item in self.items:
            if item.hours > self.hours:
                self.outcomes[item.custom_id] = left
            else:
                self.outcomes[item.custom_id] = "errored" if item.error() else "succeeded"
        self.status, self.ended_at = "ended", now()
        return True

    def to_json(self, base_url: str) -> dict[str, Any]:
        """The MessageBatch object."""
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if self.status == "ended":
            for outcome in self.outcomes.values():
                counts[outcome] += 1
        else:
            counts["processing"] = len(self.items)
        ended = self.status == "ended"

        def stamp(at: datetime | None) -> str | None:
            return rfc3339(at) if at else None

        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": self.status,
            "request_counts": counts,
            "ended_at": stamp(self.ended_at),
            "created_at": rfc3339(self.created_at),
            "expires_at": rfc3339(self.created_at + timedelta(hours=24)),
            "archived_at": None,
            "cancel_initiated_at": stamp(self.cancel_initiated_at),
            "results_url": f"{base_url}/v1/messages/batches/{self.id}/results" if ended else None,
        }

    def results_jsonl(self) -> bytes:
        """The results file: one line per request, in no particular order."""
        lines = [
            json.dumps({"custom_id": item.custom_id, "result": self._result(item)})
            for item in batchwork.result_order(self.items, lambda i: i.custom_id)
        ]
        return ("\n".join(lines) + "\n").encode()

    def _result(self, item: Item) -> dict[str, Any]:
        outcome = self.outcomes[item.custom_id]
        problem = item.error()
        if outcome == "errored" and problem:
            kind, message = problem
            return {
                "type": "errored",
                "error": {
                    "type": "error",
                    "error": {"type": kind, "message": message},
                    "request_id": "req_" + _digest(item.custom_id, 24),
                },
            }
        if outcome != "succeeded":
            return {"type": outcome}
        return {"type": "succeeded", "message": _message(item)}


def _digest(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def _message(item: Item) -> dict[str, Any]:
    return {
        "id": "msg_01" + _digest(item.custom_id, 22),
        "type": "message",
        "role": "assistant",
        "model": item.params["model"],
        "content": [{"type": "text", "text": batchwork.fake_text(item.custom_id)}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 12,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }
