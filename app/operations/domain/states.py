"""The local state machine: states, the table of allowed transitions, and evidence rules.

Pure: no I/O. Every state change in jobgate goes through `check_transition`, which
raises `TransitionRefused` for anything not in the state machine (docs/architecture.md,
"States") or lacking evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class State(StrEnum):
    # intent recorded; nothing sent; held for an operator's approval (docs/policy.md)
    AWAITING_APPROVAL = "awaiting_approval"
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


class AgentStatus(StrEnum):
    """What an agent is told (`status` in every body); a coarser view of `State`."""

    PROCESSING = "processing"
    AWAITING_APPROVAL = "awaiting_approval"  # not started; a person must approve it first
    CANCELLING = "cancelling"
    SUCCEEDED = "succeeded"
    COMPLETED_WITH_ERRORS = "completed_with_errors"  # succeeded, some items failed
    FAILED = "failed"
    CANCELLED = "cancelled"
    NEEDS_ATTENTION = "needs_attention"


# The one mapping; `STATES_OF` is derived from it, never kept by hand.
STATUS_OF: dict[State, AgentStatus] = {
    **{s: AgentStatus.PROCESSING for s in State},
    **{s: AgentStatus.CANCELLING for s in CANCELLING_STATES},
    **{s: AgentStatus.NEEDS_ATTENTION for s in NEEDS_ATTENTION},
    State.SUCCEEDED: AgentStatus.SUCCEEDED,
    State.FAILED: AgentStatus.FAILED,
    State.ABANDONED: AgentStatus.FAILED,
    State.CANCELLED: AgentStatus.CANCELLED,
    State.AWAITING_APPROVAL: AgentStatus.AWAITING_APPROVAL,
}
# A status the row refines from another (succeeded with failed items).
REFINES: dict[AgentStatus, AgentStatus] = {AgentStatus.COMPLETED_WITH_ERRORS: AgentStatus.SUCCEEDED}
STATES_OF: dict[AgentStatus, frozenset[State]] = {
    status: frozenset(s for s, st in STATUS_OF.items() if st == REFINES.get(status, status))
    for status in AgentStatus
}


S = State

# Why an operation needs a human: the inbox line, and the words inside agent messages
# (those only in needs-a-human words: app/operations/contract/lexicon.py).
HUMAN_WHY: dict[State, tuple[str, str]] = {
    S.RESULT_TIMED_OUT: (
        "result deadline passed",
        "its result deadline passed before the provider delivered the output",
    ),
    S.CANCELLATION_UNCONFIRMED: (
        "cancel deadline passed without confirmation",
        "the provider never confirmed that it stopped the job it was asked to stop",
    ),
    S.CREATE_UNCONFIRMED: (
        "create never confirmed; a remote job may exist",
        "the gateway could not confirm whether the provider started the job",
    ),
    S.CONTRACT_VIOLATION: (
        "provider broke its contract (conflicting job ids)",
        "the provider reported conflicting job ids for one request",
    ),
    S.RESULT_UNAVAILABLE: (
        "result could not be fetched",
        "the provider says the job is over, but its output could not be fetched",
    ),
    S.RESULT_VALIDATION_FAILED: (
        "result failed its checks",
        "the output was fetched but did not pass its checks",
    ),
    S.STALLED: (
        "the gateway failed repeatedly to move it forward; automation stopped",
        "the gateway could not move it forward several times in a row",
    ),
}

ALLOWED: dict[State, frozenset[State]] = {
    # The approval gate (docs/policy.md): approved, it goes on as a fresh create; denied,
    # expired or cancelled, it ends with nothing sent.
    S.AWAITING_APPROVAL: frozenset({S.CREATE_PENDING, S.FAILED, S.CANCELLED}),
    # create_pending -> create_pending: the create proved it made no job; it may go again
    # (docs/single-create.md, "Nothing was made").
    S.CREATE_PENDING: frozenset(
        {S.CREATE_PENDING, S.ACCEPTED, S.CREATE_UNKNOWN, S.FAILED, S.RESULT_COLLECTING}
    ),
    S.CREATE_UNKNOWN: frozenset({S.RECONCILING, S.CREATE_UNCONFIRMED}),
    S.RECONCILING: frozenset(
        {S.ACCEPTED, S.FAILED, S.CONTRACT_VIOLATION, S.CREATE_UNKNOWN, S.CREATE_UNCONFIRMED}
    ),
    S.ACCEPTED: frozenset({S.OBSERVING, S.CANCEL_REQUESTED, S.FAILED}),
    # observing/cancelling -> contract_violation: a status answer no reader can keep.
    S.OBSERVING: frozenset(
        {
            S.OBSERVING,
            S.RESULT_COLLECTING,
            S.FAILED,
            S.CANCEL_REQUESTED,
            S.RESULT_TIMED_OUT,
            S.CANCELLED,
            S.CONTRACT_VIOLATION,
        }
    ),
    S.CANCEL_REQUESTED: frozenset({S.CANCELLING}),
    S.CANCELLING: frozenset(
        {
            S.CANCELLED,
            S.RESULT_COLLECTING,
            S.FAILED,
            S.CANCELLATION_UNCONFIRMED,
            S.CONTRACT_VIOLATION,
        }
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


class EvidenceKind(StrEnum):
    """What a transition rests on; every target names the kinds that prove it."""

    LEASE_OWNER = "lease_owner"  # the lease holder starts polling an accepted job
    REMOTE_JOB_ID = "remote_job_id"  # the provider named the job: data {"remote_job_id"}
    REMOTE_SUCCESS = "remote_success"  # the provider says the job finished
    REMOTE_FAILED = "remote_failed"  # the provider says the job failed
    # The provider says the job failed, and its counts name items whose documents hold
    # the failed items (and any partial output): collect them before it ends `failed`.
    # data {"remote_class": "failed", "failed": N, "succeeded": N}
    REMOTE_ENDED_WITH_ITEMS = "remote_ended_with_items"
    REMOTE_CANCELLED = "remote_cancelled"  # the provider confirms the job was cancelled
    CREATE_REJECTED = "create_rejected"  # the provider definitively refused the create
    REQUEST_BUILD_FAILED = "request_build_failed"  # the create could not be built; not sent
    NO_REMOTE_JOB = "no_remote_job"  # reconciliation: rejected, and no job holds the token
    # Every create sent was proven to make no job (never left, or a refusal the profile
    # lists): data {"proof"}. Sends it again, or ends `failed` at the create deadline.
    NOTHING_CREATED = "nothing_created"
    AMBIGUOUS_CREATE = "ambiguous_create"  # the create may or may not have made a job
    CREATE_DEADLINE = "create_deadline"  # the create deadline passed unconfirmed
    RECONCILE = "reconcile"  # start looking for the job by its token
    CONFLICTING_JOB_IDS = "conflicting_job_ids"  # several jobs for one token: data {"job_ids"}
    # A 2xx status answer holds what no reader can keep (JSON nested too deep to parse, a
    # progress beyond 2^53): data {"why"}. Reading it again would read the same.
    UNREADABLE_ANSWER = "unreadable_answer"
    CANCEL_INTENT = "cancel_intent"  # someone asked to cancel (recorded on the row)
    CANCEL_SENT = "cancel_sent"  # one cancel call left: data {"outcome"}
    NO_CANCEL_ENDPOINT = "no_cancel_endpoint"  # nothing to send; watch for the end instead
    CANCEL_DEADLINE = "cancel_deadline"  # the cancel deadline passed unconfirmed
    RESULT_VALID = "result_valid"  # the result was fetched and passed its checks
    RESULT_FAILED = "result_failed"  # every item failed: data {"processed", "failed", ...}
    RESULT_INVALID = "result_invalid"  # the result failed a check: data {"code"}
    RESULT_UNAVAILABLE = "result_unavailable"  # the result could not be fetched
    RESULT_DEADLINE = "result_deadline"  # the result deadline passed
    STEP_FAILURES = "step_failures"  # the gateway's own steps kept failing
    # The provider refused the same status read the same way N times in a row: data
    # {"reads", "refusal", "since"} (docs/operations.md, "Reads that keep failing").
    READS_FAILING = "reads_failing"
    OPERATOR_DECISION = "operator_decision"  # an operator's resolve
    # The approval gate's ways out, only from `awaiting_approval` (nothing was sent):
    APPROVED = "approved"  # an operator approved the create: data {"by"}
    DENIED = "denied"  # an operator denied it: data {"by"}
    APPROVAL_EXPIRED = "approval_expired"  # nobody decided before the approval deadline
    CANCELLED_BEFORE_SEND = "cancelled_before_send"  # cancelled while awaiting approval


E = EvidenceKind
# Every target and the evidence that may take an operation there (docs/architecture.md, "States").
EVIDENCE_FOR: dict[State, frozenset[EvidenceKind]] = {
    S.CREATE_PENDING: frozenset({E.NOTHING_CREATED, E.APPROVED}),
    S.CREATE_UNKNOWN: frozenset({E.AMBIGUOUS_CREATE, E.CREATE_DEADLINE}),
    S.RECONCILING: frozenset({E.RECONCILE}),
    S.ACCEPTED: frozenset({E.REMOTE_JOB_ID}),
    S.OBSERVING: frozenset({E.LEASE_OWNER}),
    # docs/architecture.md, "States": `observing -> result_collecting` and
    # `cancelling -> result_collecting` are allowed; a failed job with item counts is
    # collected so that the `result_collecting -> failed` ("the result itself shows
    # failure") carries its items.
    S.RESULT_COLLECTING: frozenset({E.REMOTE_SUCCESS, E.REMOTE_ENDED_WITH_ITEMS}),
    S.CANCEL_REQUESTED: frozenset({E.CANCEL_INTENT}),
    S.CANCELLING: frozenset({E.CANCEL_SENT, E.NO_CANCEL_ENDPOINT}),
    S.SUCCEEDED: frozenset({E.RESULT_VALID}),
    S.FAILED: frozenset(
        {E.REMOTE_FAILED, E.CREATE_REJECTED, E.REQUEST_BUILD_FAILED, E.NO_REMOTE_JOB}
        | {E.RESULT_FAILED, E.NOTHING_CREATED, E.DENIED, E.APPROVAL_EXPIRED}
    ),
    S.CANCELLED: frozenset({E.REMOTE_CANCELLED, E.CANCELLED_BEFORE_SEND}),
    S.RESULT_TIMED_OUT: frozenset({E.RESULT_DEADLINE}),
    S.CANCELLATION_UNCONFIRMED: frozenset({E.CANCEL_DEADLINE}),
    S.CREATE_UNCONFIRMED: frozenset({E.AMBIGUOUS_CREATE, E.CREATE_DEADLINE}),
    S.CONTRACT_VIOLATION: frozenset({E.CONFLICTING_JOB_IDS, E.UNREADABLE_ANSWER}),
    S.RESULT_UNAVAILABLE: frozenset({E.RESULT_UNAVAILABLE}),
    S.RESULT_VALIDATION_FAILED: frozenset({E.RESULT_INVALID}),
    S.STALLED: frozenset({E.STEP_FAILURES, E.READS_FAILING}),
    S.ABANDONED: frozenset({E.OPERATOR_DECISION}),
}
# Evidence of the approval gate proves a move out of `awaiting_approval` and nothing else;
# and that state leaves only on it (or stalls).
GATE_EVIDENCE = frozenset({E.APPROVED, E.DENIED, E.APPROVAL_EXPIRED, E.CANCELLED_BEFORE_SEND})
COUNTS = ("processed", "succeeded", "failed")


def _payload_problem(kind: EvidenceKind, data: dict[str, Any]) -> str | None:
    """Why the evidence's data does not prove what its kind claims, or None."""
    if kind == E.REMOTE_JOB_ID and not (
        isinstance(data.get("remote_job_id"), str) and data["remote_job_id"]
    ):
        return "remote_job_id evidence carries no job id"
    if kind == E.CANCEL_SENT and not data.get("outcome"):
        return "cancel_sent evidence carries no sent cancel (its outcome)"
    if kind == E.CONFLICTING_JOB_IDS and len(set(data.get("job_ids") or ())) < 2:
        return "conflicting_job_ids evidence names fewer than two jobs"
    if kind == E.RESULT_FAILED and not all(isinstance(data.get(k), int) for k in COUNTS):
        return "result_failed evidence carries no item counts"
    if kind == E.REMOTE_ENDED_WITH_ITEMS and not (
        data.get("remote_class") == "failed"
        and any(isinstance(data.get(k), int) and data[k] > 0 for k in ("failed", "succeeded"))
    ):
        return "remote_ended_with_items evidence names no failed job with items"
    if kind == E.NOTHING_CREATED and not (isinstance(data.get("proof"), str) and data["proof"]):
        return "nothing_created evidence carries no proof"
    if kind in (E.APPROVED, E.DENIED) and not data.get("by"):
        return f"{kind.value} evidence names nobody who decided"
    if kind == E.UNREADABLE_ANSWER and not data.get("why"):
        return "unreadable_answer evidence says nothing about why"
    if kind == E.RESULT_INVALID and not data.get("code"):
        return "result_invalid evidence names no failed check"
    return None


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

    kind: EvidenceKind | str  # a str that is no EvidenceKind proves nothing
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
    needed = EVIDENCE_FOR[to_state]
    kind = evidence.kind if evidence.kind in set(EvidenceKind) else None
    if kind is None or kind not in needed:
        wanted = " or ".join(sorted(k.value for k in needed))
        raise TransitionRefused(
            from_state, to_state, f"needs evidence {wanted!r}, got {str(evidence.kind)!r}"
        )
    if (kind in GATE_EVIDENCE) != (from_state == S.AWAITING_APPROVAL) and to_state != S.STALLED:
        raise TransitionRefused(
            from_state, to_state, "approval evidence applies to awaiting_approval alone"
        )
    problem = _payload_problem(EvidenceKind(kind), evidence.data or {})
    if problem is not None:
        raise TransitionRefused(from_state, to_state, problem)
