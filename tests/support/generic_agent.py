"""A generic keyword agent: rules written from the contract's three situations alone.

These rules come from docs/agent-api.md "The short version" and the first paragraph of
"Three situations": an operation is in progress (keep waiting), needs a human (stop,
tell the user), or finished with success or without. The word lists are what anyone
would write for those situations, not jobgate's phrases: they were not tuned to a body.
The agent reads `message` only. A message whose words point at two situations, or at
none, leaves it confused: stuck, which counts as a miss.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# What an outsider expects each situation to say, as whole lower-case words.
NEEDS_HUMAN = frozenset(
    {"human", "person", "people", "operator", "review", "approve", "approval", "confirm",
     "confirmed", "decide", "decision", "manual", "manually", "attention"}
)  # fmt: skip
FAILURE = frozenset(
    {"fail", "failed", "failure", "error", "errors", "cancelled", "canceled", "expired",
     "abandoned", "rejected", "unsuccessful"}
)  # fmt: skip
SUCCESS = frozenset({"succeeded", "success", "successful", "successfully", "complete", "completed"})
WAITING = frozenset({"wait", "waiting", "pending", "running", "progress", "processing", "queued"})
RULES = {"needs_human": NEEDS_HUMAN, "failure": FAILURE, "success": SUCCESS, "waiting": WAITING}
CONFUSED = "confused"
_WORD = re.compile(r"[a-z]+")  # an outsider splits on anything that is not a letter


def read(message: str) -> str:
    """The one situation the words point at, or `confused`."""
    words = set(_WORD.findall(message.lower()))
    hits = [name for name, vocabulary in RULES.items() if words & vocabulary]
    return hits[0] if len(hits) == 1 else CONFUSED


def truth(body: dict[str, Any]) -> str:
    """The situation the body's fields say (what the words must lead to)."""
    if not body.get("done"):
        return "waiting"
    outcome = body.get("outcome") or body.get("status")
    if outcome == "succeeded":
        return "success"
    if outcome == "needs_attention":
        return "needs_human"
    return "failure"


@dataclass
class Tally:
    """Every body an agent read, and how the generic rules read it."""

    read: int = 0
    misses: list[str] = field(default_factory=list)
    false_successes: int = 0
    stuck: int = 0
    jobs: dict[str, str] = field(default_factory=dict)  # operation id -> last reading

    def check(self, body: dict[str, Any], where: str = "") -> None:
        said, meant = read(str(body.get("message", ""))), truth(body)
        self.read += 1
        self.jobs[str(body.get("operation_id"))] = said
        if said == meant:
            return
        if said == "success":
            self.false_successes += 1
        if said == CONFUSED:
            self.stuck += 1
        self.misses.append(f"{where}: read {said}, is {meant}: {body.get('message')}")


def bodies_in(data: Any) -> list[dict[str, Any]]:
    """The operation bodies (and their verdicts) an answer carries: a body, a 409 with
    its verdict at the top, a list's items, the attention inbox's operations."""
    if not isinstance(data, dict):
        return []
    if "message" in data and "done" in data:
        return [data]  # an operation body, or a refusal with the verdict at the top
    if "message" in data and "result" in data and "status" in data:
        return [{**data, "done": True}]  # GET /result: a done operation's output
    found: list[dict[str, Any]] = []
    for item in data.get("items") or []:
        if isinstance(item, dict):
            found += bodies_in(item.get("operation", item))
    return found
