"""Which words may appear in which situation: the lexicon every agent-facing message obeys.

A model (or a keyword rule written by someone who never read a jobgate body) decides
from words. So each situation owns its words, and a message of one situation uses no
word another situation owns (docs/agent-api.md, "Three situations, three vocabularies"):

- `in_progress`: waiting words (wait, running, pending, progress ...);
- `needs_human`: words about people and decisions (human, operator, review, approve,
  confirm, decide ...);
- `finished_success`: success words (succeeded, success, complete ...);
- `finished_not_success`: failure words (failed, error, cancelled, expired, partial ...).

Words that say the work is over (`finished`, `ended`) belong to both finished
situations and to neither of the others. A word belongs to a situation when it starts
with one of that situation's stems (`STEMS`: `cancel` catches `cancelled` and
`cancellation`), as a reader matching keywords would find it; an identifier such as
`result_validation_failed` or `wait_for_operation` is one token, a code and not a word,
so it never counts. `tests/unit/test_lexicon.py` renders every body on every channel and
checks it with `leaks`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

IN_PROGRESS = "in_progress"
NEEDS_HUMAN = "needs_human"
FINISHED_SUCCESS = "finished_success"
FINISHED_NOT_SUCCESS = "finished_not_success"
SITUATIONS = (IN_PROGRESS, NEEDS_HUMAN, FINISHED_SUCCESS, FINISHED_NOT_SUCCESS)

WAITING_WORDS = frozenset(
    {"wait", "waits", "waiting", "running", "pending", "progress", "queued", "processing"}
)
PEOPLE_WORDS = frozenset(
    {
        "person",
        "persons",
        "people",
        "human",
        "humans",
        "operator",
        "operators",
        "review",
        "reviews",
        "reviewed",
        "approve",
        "approved",
        "approval",
        "confirm",
        "confirms",
        "confirmed",
        "confirmation",
        "unconfirmed",
        "decide",
        "decided",
        "decision",
        "decisions",
        "manual",
        "manually",
        "attention",
    }
)
SUCCESS_WORDS = frozenset(
    {
        "succeed",
        "succeeds",
        "succeeded",
        "success",
        "successful",
        "successfully",
        "complete",
        "completes",
        "completed",
    }
)
FAILURE_WORDS = frozenset(
    {
        "fail",
        "fails",
        "failed",
        "failing",
        "failure",
        "failures",
        "error",
        "errors",
        "cancelled",
        "canceled",
        "expired",
        "abandoned",
        "rejected",
        "unsuccessful",
        "partial",
        "partially",
    }
)
FINISHED_WORDS = frozenset({"finish", "finished", "finishes", "ended"})

# The stems each situation owns, as a reader who never saw a jobgate body would look
# for them: a word carries a stem when it starts with it, so `cancel` is in `cancel`,
# `cancels`, `cancelled` and `cancellation` alike (whole words are not enough: a success
# that said "the cancel request" misled such readers). `cancel` is owned by the
# not-success situation and by in-progress (a cancel REQUESTED is still in progress),
# never by a success or a person's question. Every listed word above carries a stem of
# its own situation (a unit test holds it).
STEMS: dict[str, tuple[str, ...]] = {
    IN_PROGRESS: ("wait", "running", "pending", "progress", "queue", "processing", "cancel"),
    NEEDS_HUMAN: (
        "person", "people", "human", "operator", "review", "approv", "confirm", "unconfirm",
        "decid", "decision", "manual", "attention",
    ),
    FINISHED_SUCCESS: ("succe", "complet", "finish", "ended"),
    FINISHED_NOT_SUCCESS: (
        "fail", "error", "cancel", "expire", "abandon", "reject", "unsuccess", "partial",
        "finish", "ended",
    ),
}  # fmt: skip

# The words each situation owns (the listed words, for docs and tests; matching is by
# stem, `owners`).
OWNED: dict[str, frozenset[str]] = {
    IN_PROGRESS: WAITING_WORDS,
    NEEDS_HUMAN: PEOPLE_WORDS,
    FINISHED_SUCCESS: SUCCESS_WORDS | FINISHED_WORDS,
    FINISHED_NOT_SUCCESS: FAILURE_WORDS | FINISHED_WORDS,
}
ALL_WORDS = frozenset().union(*OWNED.values())

_WORD = re.compile(r"\w+")  # letters, digits and `_`: an identifier stays one token


def situation_of(status: str) -> str:
    """The situation an agent `status` is in (`completed_with_errors` is not a success)."""
    if status in ("processing", "cancelling"):
        return IN_PROGRESS
    if status in ("needs_attention", "awaiting_approval"):
        return NEEDS_HUMAN
    if status == "succeeded":
        return FINISHED_SUCCESS
    return FINISHED_NOT_SUCCESS


def words(text: str) -> list[str]:
    """The lower-cased words of `text` (identifiers with `_` stay whole, never split)."""
    return [t.lower() for t in _WORD.findall(text)]


def owners(word: str) -> frozenset[str]:
    """The situations one of whose stems `word` starts with (none for an identifier such
    as `wait_for_operation`: a code, not a word)."""
    if "_" in word or any(c.isdigit() for c in word):
        return frozenset()
    return frozenset(s for s, stems in STEMS.items() if word.startswith(stems))


def leaks(text: str, situation: str) -> list[str]:
    """Words of `text` that carry a stem of another situation and none of `situation`."""
    return [w for w in words(text) if (found := owners(w)) and situation not in found]


def situations_named(text: str) -> set[str]:
    """Every situation some word of `text` carries a stem of (a clean message names one,
    or the two finished ones through a word they share)."""
    named: set[str] = set()
    for w in words(text):
        named |= owners(w)
    return named


def disjoint(groups: Iterable[frozenset[str]]) -> bool:
    """No word in two of the groups."""
    seen: set[str] = set()
    for group in groups:
        if seen & group:
            return False
        seen |= group
    return True
