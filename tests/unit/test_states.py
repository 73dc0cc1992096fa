"""The state machine refuses what docs/architecture.md's "States" does not allow."""

from __future__ import annotations

import pytest

from app.operations.domain.states import (
    ALLOWED,
    HUMAN_WHY,
    NEEDS_ATTENTION,
    STATES_OF,
    STATUS_OF,
    TERMINAL,
    AgentStatus,
    Evidence,
    EvidenceKind,
    State,
    TransitionRefused,
    check_transition,
    is_done,
)


def test_progress_100_is_not_success() -> None:
    # Observing can only reach succeeded through result collection.
    with pytest.raises(TransitionRefused):
        check_transition(State.OBSERVING, State.SUCCEEDED, Evidence("remote_success"))


def test_remote_failed_never_goes_back_to_observing() -> None:
    with pytest.raises(TransitionRefused):
        check_transition(State.FAILED, State.OBSERVING, Evidence("remote_running"))


def test_sending_a_cancel_is_not_cancelled() -> None:
    with pytest.raises(TransitionRefused):
        check_transition(State.CANCELLING, State.CANCELLED, Evidence("cancel_sent"))
    with pytest.raises(TransitionRefused):
        check_transition(State.CANCEL_REQUESTED, State.CANCELLED, Evidence("remote_cancelled"))
    check_transition(State.CANCELLING, State.CANCELLED, Evidence("remote_cancelled"))


def test_success_needs_a_valid_result() -> None:
    with pytest.raises(TransitionRefused):
        check_transition(State.RESULT_COLLECTING, State.SUCCEEDED, Evidence("remote_success"))
    check_transition(State.RESULT_COLLECTING, State.SUCCEEDED, Evidence("result_valid"))


def test_accepted_needs_a_job_id() -> None:
    with pytest.raises(TransitionRefused):
        check_transition(State.CREATE_PENDING, State.ACCEPTED, Evidence("none"))


def test_needs_attention_leaves_only_through_resolve() -> None:
    for state in NEEDS_ATTENTION:
        assert state not in ALLOWED
        with pytest.raises(TransitionRefused):
            check_transition(state, State.OBSERVING, Evidence("remote_running"))
        check_transition(state, State.OBSERVING, Evidence("operator_decision", operator=True))
    with pytest.raises(TransitionRefused):
        check_transition(State.FAILED, State.OBSERVING, Evidence("x", operator=True))


def test_terminal_states_have_no_way_out() -> None:
    for state in TERMINAL:
        assert state not in ALLOWED
        assert is_done(state)


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        (State.CREATE_PENDING, State.OBSERVING),
        (State.CREATE_UNKNOWN, State.ACCEPTED),
        (State.RECONCILING, State.RESULT_COLLECTING),
        (State.ACCEPTED, State.SUCCEEDED),
        (State.CANCEL_REQUESTED, State.OBSERVING),
        (State.RESULT_COLLECTING, State.OBSERVING),
        (State.SUCCEEDED, State.FAILED),
    ],
)
def test_transitions_outside_the_table_are_refused(src: State, dst: State) -> None:
    with pytest.raises(TransitionRefused):
        check_transition(src, dst, Evidence("anything"))


def test_every_working_state_may_stall_with_evidence_of_the_failures() -> None:
    working = set(State) - TERMINAL - NEEDS_ATTENTION
    assert working == set(ALLOWED)
    for state in working:
        check_transition(state, State.STALLED, Evidence("step_failures"))
        with pytest.raises(TransitionRefused):
            check_transition(state, State.STALLED, Evidence("remote_running"))
    for state in TERMINAL | (NEEDS_ATTENTION - {State.STALLED}):
        with pytest.raises(TransitionRefused):
            check_transition(state, State.STALLED, Evidence("step_failures"))


def test_stalled_needs_a_human_and_leaves_only_through_resolve() -> None:
    assert State.STALLED in NEEDS_ATTENTION and is_done(State.STALLED)
    for target in (State.ACCEPTED, State.OBSERVING, State.RESULT_COLLECTING, State.ABANDONED):
        check_transition(State.STALLED, target, Evidence("operator_decision", operator=True))
        with pytest.raises(TransitionRefused):
            check_transition(State.STALLED, target, Evidence("step_failures"))
    with pytest.raises(TransitionRefused):
        check_transition(State.STALLED, State.FAILED, Evidence("x", operator=True))


def test_every_target_requires_evidence() -> None:
    """No target accepts a transition without proof (FAILED and the deadlines included)."""
    for src, targets in ALLOWED.items():
        for dst in targets:
            with pytest.raises(TransitionRefused, match="needs evidence"):
                check_transition(src, dst, Evidence("none"))


def test_evidence_payloads_are_checked() -> None:
    with pytest.raises(TransitionRefused, match="no job id"):
        check_transition(State.CREATE_PENDING, State.ACCEPTED, Evidence(EvidenceKind.REMOTE_JOB_ID))
    check_transition(
        State.CREATE_PENDING,
        State.ACCEPTED,
        Evidence(EvidenceKind.REMOTE_JOB_ID, {"remote_job_id": "job_1"}),
    )
    with pytest.raises(TransitionRefused, match="no sent cancel"):
        check_transition(
            State.CANCEL_REQUESTED, State.CANCELLING, Evidence(EvidenceKind.CANCEL_SENT, {})
        )
    check_transition(
        State.CANCEL_REQUESTED,
        State.CANCELLING,
        Evidence(EvidenceKind.CANCEL_SENT, {"outcome": "ok"}),
    )
    # A provider with no cancel endpoint: nothing was sent, and the evidence says so.
    check_transition(
        State.CANCEL_REQUESTED, State.CANCELLING, Evidence(EvidenceKind.NO_CANCEL_ENDPOINT)
    )
    with pytest.raises(TransitionRefused, match="no item counts"):
        check_transition(
            State.RESULT_COLLECTING, State.FAILED, Evidence(EvidenceKind.RESULT_FAILED)
        )
    counts = {"processed": 3, "succeeded": 0, "failed": 3}
    check_transition(
        State.RESULT_COLLECTING, State.FAILED, Evidence(EvidenceKind.RESULT_FAILED, counts)
    )
    with pytest.raises(TransitionRefused, match="fewer than two"):
        check_transition(
            State.RECONCILING,
            State.CONTRACT_VIOLATION,
            Evidence(EvidenceKind.CONFLICTING_JOB_IDS, {"job_ids": ["a"]}),
        )


def test_the_status_inverse_is_derived_from_the_one_mapping() -> None:
    for state, status in STATUS_OF.items():
        assert state in STATES_OF[status]
    assert STATES_OF[AgentStatus.COMPLETED_WITH_ERRORS] == {State.SUCCEEDED}
    assert set().union(*STATES_OF.values()) == set(State)
    assert set(HUMAN_WHY) == NEEDS_ATTENTION


def test_a_failed_job_goes_to_collection_only_with_items_to_collect() -> None:
    """`observing/cancelling -> result_collecting` for a failed job (docs/architecture.md's
    "States" has both
    edges, and `result_collecting -> failed` "the result itself shows failure"): only when
    its counts name items, so the failed items reach /errors; never a remote `failed`
    back to observing, and never without counts."""
    ended = EvidenceKind.REMOTE_ENDED_WITH_ITEMS
    with pytest.raises(TransitionRefused, match="no failed job with items"):
        check_transition(State.OBSERVING, State.RESULT_COLLECTING, Evidence(ended, {}))
    with pytest.raises(TransitionRefused, match="no failed job with items"):
        check_transition(
            State.OBSERVING,
            State.RESULT_COLLECTING,
            Evidence(ended, {"remote_class": "failed", "failed": 0, "succeeded": 0}),
        )
    proof = Evidence(ended, {"remote_class": "failed", "failed": 2, "succeeded": 0})
    check_transition(State.OBSERVING, State.RESULT_COLLECTING, proof)
    check_transition(State.CANCELLING, State.RESULT_COLLECTING, proof)
    with pytest.raises(TransitionRefused, match="needs evidence"):
        check_transition(State.RESULT_COLLECTING, State.SUCCEEDED, proof)


def test_a_create_proven_to_make_nothing_stays_pending_or_fails_with_its_proof() -> None:
    proof = Evidence(EvidenceKind.NOTHING_CREATED, {"proof": "HTTP 529 overloaded_error"})
    check_transition(State.CREATE_PENDING, State.CREATE_PENDING, proof)
    check_transition(State.CREATE_PENDING, State.FAILED, proof)
    with pytest.raises(TransitionRefused, match="no proof"):
        check_transition(
            State.CREATE_PENDING, State.CREATE_PENDING, Evidence(EvidenceKind.NOTHING_CREATED)
        )
    # Only the create's own state may stay put on it; no other state goes back to it.
    with pytest.raises(TransitionRefused):
        check_transition(State.CREATE_UNKNOWN, State.CREATE_PENDING, proof)
    with pytest.raises(TransitionRefused):
        check_transition(State.CREATE_PENDING, State.CREATE_PENDING, Evidence("reconcile"))
