"""The local state machine: states, the table of allowed transitions, and evidence rules.

Pure: no I/O. Every state change in jobgate goes through `check_transition`, which
raises `TransitionRefused` for anything not in SPEC section 3 or lacking evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class State(StrEnum):
    CREATE_PENDING = "create_pending"  # intent recorded; create not yet confirmed
    CREATE_UNKNOWN = "create_unknown"  # create outcome ambiguous (timeout, reset, 5xx)
    RECONCILING = "reconciling"  # finding the remote job by the stored token
    ACCEPTED = "accepted"  # remote job id known
    OBSERVING = "observing"  # lease owner polling the remote job
    RESULT_COLLECTING = "result_collecting"  # remote says done; fetching and checking
    CANCEL_REQUESTED = "cancel_requested"  # intent to cancel recorded; not yet sent
    CANCELLING = "cancelling"  # cancel sent; waiting for a terminal remote state
    SUCCEEDED = "succeeded"  # result collected and valid
    FAILED = "failed"  # remote failed, or create definitively rejected
    CANCELLED = "cancelled"  # remote confirmed cancellation
    RESULT_TIMED_OUT = "result_timed_out"  # result deadline passed; polling stopped
    CANCELLATION_UNCONFIRMED = "cancellation_unconfirmed"  # cancel deadline passed
    CREATE_UNCONFIRMED = "create_unconfirmed"  # create deadline passed, remote job unknown
    CONTRACT_VIOLATION = "contract_violation"  # provider broke its contract
    RESULT_UNAVAILABLE = "result_unavailable"  # remote done, result not fetched by deadline
    RESULT_VALIDATION_FAILED = "result_validation_failed"  # result failed its checks
    STALLED = "stalled"  # the gateway failed N times in a row to move it; automation stopped
    ABANDONED = "abandoned"  # an operator stopped all work on it


TERMINAL = frozenset({State.SUCCEEDED, State.FAILED, State.CANCELLED, State.ABANDONED})
NEEDS_ATTENTION = frozenset(
    {
        State.RESULT_TIMED_OUT,
        State.CANCELLATION_UNCONFIRMED,
        State.CREATE_UNCONFIRMED,
        State.CONTRACT_VIOLATION,
        State.RESULT_UNAVAILABLE,
        State.RESULT_VALIDATION_FAILED,
        State.STALLED,
    }
)
CANCELLING_STATES = frozenset({State.CANCEL_REQUESTED, State.CANCELLING})


def is_terminal(state: State) -> bool:
    return state in TERMINAL


def needs_attention(state: State) -> bool:
    return state in NEEDS_ATTENTION


def is_done(state: State) -> bool:
    """The gateway will do nothing more on its own."""
    return state in TERMINAL or state in NEEDS_ATTENTION


S = State
ALLOWED: dict[State, frozenset[State]] = {
    S.CREATE_PENDING: frozenset({S.ACCEPTED, S.CREATE_UNKNOWN, S.FAILED, S.RESULT_COLLECTING}),
    S.CREATE_UNKNOWN: frozenset({S.RECONCILING, S.CREATE_UNCONFIRMED}),
    S.RECONCILING: frozenset(
        {S.ACCEPTED, S.FAILED, S.CONTRACT_VIOLATION, S.CREATE_UNKNOWN, S.CREATE_UNCONFIRMED}
    ),
    S.ACCEPTED: frozenset({S.OBSERVING, S.CANCEL_REQUESTED, S.FAILED}),
    S.OBSERVING: frozenset(
        {
            S.OBSERVING,
            S.RESULT_COLLECTING,
            S.FAILED,
            S.CANCEL_REQUESTED,
            S.RESULT_TIMED_OUT,
            S.CANCELLED,
        }
    ),
    S.CANCEL_REQUESTED: frozenset({S.CANCELLING}),
    S.CANCELLING: frozenset(
        {S.CANCELLED, S.RESULT_COLLECTING, S.FAILED, S.CANCELLATION_UNCONFIRMED}
    ),
    S.RESULT_COLLECTING: frozenset(
        {S.SUCCEEDED, S.FAILED, S.RESULT_UNAVAILABLE, S.RESULT_VALIDATION_FAILED}
    ),
}
# Any state automation still works on may stall: the gateway's own steps kept failing
# (an exception, not a provider answer), and retrying forever would hide it.
ALLOWED.update({src: targets | {S.STALLED} for src, targets in ALLOWED.items()})
# Needs-attention states leave automation only through an operator's resolve.
RESOLVE_TARGETS = frozenset({S.ACCEPTED, S.OBSERVING, S.RESULT_COLLECTING, S.ABANDONED})

# Which remote classes prove which target. A target listed here needs that evidence.
_EVIDENCE_REQUIRED: dict[State, str] = {
    S.ACCEPTED: "remote_job_id",
    S.RESULT_COLLECTING: "remote_success",
    S.CANCELLED: "remote_cancelled",
    S.SUCCEEDED: "result_valid",
    S.CANCELLING: "cancel_sent",
    S.CONTRACT_VIOLATION: "conflicting_job_ids",
    S.CANCEL_REQUESTED: "cancel_intent",
    S.ABANDONED: "operator_decision",
    S.STALLED: "step_failures",
}


class TransitionRefused(Exception):
    """A transition that is not in the table or lacks the evidence it needs."""

    def __init__(self, from_state: State, to_state: State, reason: str) -> None:
        super().__init__(f"{from_state} -> {to_state} refused: {reason}")
        self.from_state = from_state
        self.to_state = to_state
        self.reason = reason


@dataclass(frozen=True)
class Evidence:
    """What a transition rests on. `kind` names the proof; `data` carries it."""

    kind: str
    data: dict[str, Any] | None = None
    operator: bool = False  # an operator's resolve decision


def check_transition(from_state: State, to_state: State, evidence: Evidence) -> None:
    """Raise `TransitionRefused` unless `from_state -> to_state` is allowed with `evidence`."""
    if evidence.operator:
        if from_state not in NEEDS_ATTENTION:
            raise TransitionRefused(from_state, to_state, "resolve applies to needs-attention only")
        if to_state not in RESOLVE_TARGETS:
            raise TransitionRefused(from_state, to_state, "not a resolve target")
        return
    allowed = ALLOWED.get(from_state, frozenset())
    if to_state not in allowed:
        raise TransitionRefused(from_state, to_state, "not in the transition table")
    needed = _EVIDENCE_REQUIRED.get(to_state)
    if needed is not None and evidence.kind != needed:
        raise TransitionRefused(
            from_state, to_state, f"needs evidence {needed!r}, got {evidence.kind!r}"
        )
