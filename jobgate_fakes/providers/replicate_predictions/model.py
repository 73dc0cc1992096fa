"""Replicate predictions of the fake's one model, `jobgate/echo`, driven by a per-prediction clock.

The fake's clock: one status read (or one `POST /_fake/advance` step, or one second of
a `Prefer: wait` create) is one second of that prediction's life. Replicate inputs are
defined by each model, so the fake's model defines inputs that set its behaviour:

| input | default | meaning |
| --- | --- | --- |
| `prompt` | required | echoed back word by word as the output list |
| `queue_seconds` | 0 | seconds spent `starting` after the create |
| `run_seconds` | 1 | seconds spent `processing` (one log line and more output per second) |
| `fail` | false | the model raises at the end: `failed`, `error` set, output null |

A `Cancel-After` deadline (e.g. `30s`, `2m`) is measured on the same clock: reached
while `starting` the prediction is `aborted`, while `processing` it is `canceled`.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jobgate_fakes.providers.base import now, rfc3339

MODEL = "jobgate/echo"
VERSION = hashlib.sha256(b"jobgate/echo:1").hexdigest()
TERMINAL = frozenset({"succeeded", "failed", "canceled", "aborted"})
EVENTS = frozenset({"start", "output", "logs", "completed"})
DEFAULT_EVENTS = frozenset({"output", "completed"})  # "new outputs or ... finished"
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def parse_duration(text: str) -> int | None:
    """Seconds in a `Cancel-After` value (`90`, `90s`, `5m`, `1h30m`), or None if malformed."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    match = _DURATION.match(text)
    if not match or not any(match.groups()):
        return None
    h, m, s = (int(g) if g else 0 for g in match.groups())
    return h * 3600 + m * 60 + s


def input_problems(given: Any) -> list[dict[str, str]]:
    """Why `input` does not fit the echo model's schema (Replicate's `invalid_fields`)."""
    if not isinstance(given, dict):
        return [{"type": "type", "field": "input", "description": "input must be an object"}]
    problems = []
    if not isinstance(given.get("prompt"), str):
        problems.append(
            {"type": "required", "field": "prompt", "description": "prompt is required"}
        )
    for name in ("queue_seconds", "run_seconds"):
        value = given.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            problems.append(
                {"type": "type", "field": name, "description": f"{name} must be an integer >= 0"}
            )
    if not isinstance(given.get("fail", False), bool):
        problems.append({"type": "type", "field": "fail", "description": "fail must be a boolean"})
    return problems


@dataclass
class Prediction:
    """One prediction and its clock (`seconds`)."""

    id: str
    input: dict[str, Any]
    webhook: str | None
    events: frozenset[str]
    deadline: int | None
    stream: bool
    created_at: datetime = field(default_factory=now)
    seconds: int = 0
    status: str = "starting"
    started_at: datetime | None = None
    completed_at: datetime | None = None
    logs: list[str] = field(default_factory=list)
    output: list[str] | None = None
    error: str | None = None

    @property
    def queue(self) -> int:
        return int(self.input.get("queue_seconds", 0))

    @property
    def run(self) -> int:
        return int(self.input.get("run_seconds", 1))

    def tick(self) -> list[str]:
        """One second passes; returns the webhook events it caused (before filtering)."""
        if self.status in TERMINAL:
            return []
        self.seconds += 1
        if self.deadline is not None and self.seconds >= self.deadline:
            return self._end("aborted" if self.status == "starting" else "canceled")
        if self.seconds <= self.queue:
            return []
        events = []
        if self.status == "starting":
            self.status, self.started_at = "processing", now()
        done = self.seconds - self.queue
        if done <= self.run:
            self.logs.append(f"step {done}/{self.run}")
            self.output = self._words()[: math.ceil(len(self._words()) * done / max(self.run, 1))]
            events += ["logs", "output"]
        if done >= self.run:
            return events + self._end("failed" if self.input.get("fail") else "succeeded")
        return events

    def cancel(self) -> list[str]:
        """Cancel if still running; returns the webhook events it caused."""
        return [] if self.status in TERMINAL else self._end("canceled")

    def _end(self, status: str) -> list[str]:
        self.status, self.completed_at = status, now()
        if status == "failed":
            self.output, self.error = None, "fake model failure: the input asked to fail"
            self.logs.append("Traceback (most recent call last):\nRuntimeError: asked to fail")
        elif status == "succeeded":
            self.output = self._words()
        return ["completed"]

    def _words(self) -> list[str]:
        return str(self.input.get("prompt", "")).split() or [""]

    def to_json(self, base_url: str) -> dict[str, Any]:
        """The prediction object (also the webhook body)."""
        urls = {
            "get": f"{base_url}/v1/predictions/{self.id}",
            "cancel": f"{base_url}/v1/predictions/{self.id}/cancel",
            "web": f"https://replicate.com/p/{self.id}",
        }
        if self.stream:
            urls["stream"] = f"{base_url}/v1/predictions/{self.id}/stream"
        metrics: dict[str, Any] = {}
        if self.status in TERMINAL and self.started_at is not None:
            metrics = {"predict_time": float(self.run), "total_time": float(self.seconds)}
        return {
            "id": self.id,
            "model": MODEL,
            "version": VERSION,
            "input": self.input,
            "logs": "\n".join(self.logs),
            "output": self.output,
            "data_removed": False,
            "error": self.error,
            "status": self.status,
            "source": "api",
            "created_at": rfc3339(self.created_at),
            "started_at": rfc3339(self.started_at) if self.started_at else None,
            "completed_at": rfc3339(self.completed_at) if self.completed_at else None,
            "urls": urls,
            "metrics": metrics,
        }


def new_id() -> str:
    """A 26-character lowercase base32 id, like Replicate's."""
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    return "".join(secrets.choice(alphabet) for _ in range(26))
