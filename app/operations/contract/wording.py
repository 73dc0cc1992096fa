"""The words of agent contract v2: three situations, three vocabularies.

A model acts on the words of `message`, so no phrase may mean two things. Each
situation has its own marker phrases, and a message of one situation never uses a
marker of another (a unit test renders every state and checks it). Beneath the markers,
`lexicon` assigns single words to situations and a test checks every channel for them:

- IN_PROGRESS: the work is not finished; keep waiting, with when and how.
- NEEDS_HUMAN: automation stopped; stop, tell the user, do not retry.
- FINISHED: the work ended; the result, or the failure.

docs/agent-api.md lists the same phrases for agent developers.
"""

from __future__ import annotations

# In progress: keep waiting. Never used once `done` is true.
IN_PROGRESS_NOW = "is IN PROGRESS"
KEEP_WAITING = "KEEP WAITING"
NOT_YET = "Do not report an outcome yet"
CHECK_AGAIN = "check again in at least"

# Needs a human: stop. Never says "finished", "failed" or "succeeded".
NEEDS_A_HUMAN = "NEEDS A HUMAN"
STOPPED = "Automatic work on it has STOPPED"
DO_NOT_RETRY = "do not retry"
TELL_THE_USER = "Tell the user"
NOT_STARTED = "NOT STARTED"  # held before any provider call (the approval gate)

# Finished: the result (success words only here) or the failure (failure words only here).
HAS_FINISHED = "has FINISHED"
SUCCEEDED = "SUCCEEDED"
MAY_REPORT_SUCCESS = "You may report success"
PARTIAL = "a PARTIAL result"
FAILED = "FAILED"
CANCELLED = "CANCELLED"
ABANDONED = "ABANDONED"
EXPIRED = "EXPIRED"
REPORT_THE_FAILURE = "Report the failure"

IN_PROGRESS: tuple[str, ...] = (IN_PROGRESS_NOW, KEEP_WAITING, NOT_YET, CHECK_AGAIN)
NEEDS_HUMAN: tuple[str, ...] = (
    NEEDS_A_HUMAN,
    STOPPED,
    DO_NOT_RETRY,
    TELL_THE_USER,
    NOT_STARTED,
)
FINISHED: tuple[str, ...] = (
    HAS_FINISHED,
    SUCCEEDED,
    MAY_REPORT_SUCCESS,
    PARTIAL,
    FAILED,
    CANCELLED,
    ABANDONED,
    EXPIRED,
    REPORT_THE_FAILURE,
)
VOCABULARIES: dict[str, tuple[str, ...]] = {
    "in_progress": IN_PROGRESS,
    "needs_human": NEEDS_HUMAN,
    "finished": FINISHED,
}


def situation_of(status: str) -> str:
    """The situation an agent status belongs to (the vocabulary its message uses)."""
    if status in ("processing", "cancelling"):
        return "in_progress"
    if status in ("needs_attention", "awaiting_approval"):
        return "needs_human"
    return "finished"


def how_to_call(call: str, tool: str | None) -> str:
    """`GET /v1/...` alone, or with the MCP tool that makes it when MCP is on."""
    return f"{call} (MCP tool {tool})" if tool else call
