"""Agent contract v2: three situations, three vocabularies, no phrase meaning two things.

Every state (and the variants an agent can meet: partial, cancel requested, a
timed-out wait, each single-create guarantee) is rendered by the one renderer; each
message must speak its own situation's vocabulary and never another's.
"""

from __future__ import annotations

import pytest

from app.operations.contract import wording as W
from app.operations.contract.presenter import to_body
from app.operations.domain.operation import Operation
from app.operations.domain.states import State, is_done
from tests.support.operation_rows import NOW
from tests.support.operation_rows import an_operation as _op


def _variants() -> list[tuple[str, Operation, bool]]:
    out: list[tuple[str, Operation, bool]] = []
    for state in State:
        for single in ("token", "lookup", "none"):
            out.append((f"{state.value}/{single}", _op(state, single_create=single), False))
        out.append((f"{state.value}/waited", _op(state), True))
    partial = _op(State.SUCCEEDED, result_summary={"processed": 100, "failed": 5})
    out.append(("succeeded/partial", partial, False))
    late = _op(State.SUCCEEDED, cancel_requested_at=NOW)
    out.append(("succeeded/late-cancel", late, False))
    out.append(("observing/cancel-requested", _op(State.OBSERVING, cancel_requested_at=NOW), False))
    failed = _op(State.FAILED, error={"code": "invalid_input", "message": "bad input"})
    out.append(("failed/with-reason", failed, False))
    kept = _op(
        State.FAILED,
        error={"code": "remote_failed", "message": "the job failed after 4 of 10 items"},
        result={"rows": [1, 2, 3, 4]},
        result_summary={"processed": 10, "succeeded": 4, "failed": 1, "not_processed": 5},
    )
    out.append(("failed/partial-output", kept, False))
    return out


VARIANTS = _variants()


def test_the_vocabularies_share_no_phrase() -> None:
    for name, phrases in W.VOCABULARIES.items():
        for other, theirs in W.VOCABULARIES.items():
            if other == name:
                continue
            for phrase in phrases:
                clash = [p for p in theirs if phrase in p or p in phrase]
                assert not clash, f"{name} {phrase!r} overlaps {other} {clash}"


@pytest.mark.parametrize(("label", "op", "waited"), VARIANTS, ids=[v[0] for v in VARIANTS])
@pytest.mark.parametrize("mcp", [False, True], ids=["rest", "mcp"])
def test_each_message_speaks_only_its_situations_vocabulary(
    label: str, op: Operation, waited: bool, mcp: bool
) -> None:
    body = to_body(op, NOW, waited=waited, mcp=mcp)
    situation = W.situation_of(body.status)
    own = W.VOCABULARIES[situation]
    assert any(p in body.message for p in own), f"{label}: {body.message}"
    for other, phrases in W.VOCABULARIES.items():
        if other != situation:
            used = [p for p in phrases if p in body.message]
            assert not used, f"{label} ({situation}) uses {other} words {used}: {body.message}"


@pytest.mark.parametrize(("label", "op", "waited"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_outcome_is_the_status_once_done_and_null_before(
    label: str, op: Operation, waited: bool
) -> None:
    body = to_body(op, NOW, waited=waited)
    if is_done(op.state):
        assert body.done and body.outcome == body.status, label
    elif waited:
        assert body.outcome == "timed_out", label
    else:
        assert body.outcome is None, label


def test_a_needs_human_message_never_says_not_finished_and_names_no_call() -> None:
    for state in (State.RESULT_TIMED_OUT, State.CONTRACT_VIOLATION, State.STALLED):
        body = to_body(_op(state), NOW, mcp=True)
        assert body.message.startswith("The report job NEEDS A HUMAN")
        assert "IN PROGRESS" not in body.message and body.next_action is None
        assert "op_01TEST" in body.message


def test_next_action_names_the_mcp_tool_only_when_mcp_is_on() -> None:
    rest = to_body(_op(State.OBSERVING), NOW, mcp=False)
    mcp = to_body(_op(State.OBSERVING), NOW, mcp=True)
    assert rest.next_action is not None and mcp.next_action is not None
    assert rest.next_action.call == mcp.next_action.call == "GET /v1/operations/op_01TEST/wait"
    assert rest.next_action.tool is None and "wait_for_operation" not in rest.message
    assert mcp.next_action.tool == "wait_for_operation" and "wait_for_operation" in mcp.message


def test_a_failed_job_offers_its_output_only_when_some_items_succeeded() -> None:
    part = {"processed": 10, "succeeded": 4, "failed": 1, "not_processed": 5}
    kept = to_body(_op(State.FAILED, result={"rows": [1]}, result_summary=part), NOW)
    assert kept.next_action is not None and kept.next_action.call.endswith("/result")
    assert "4 items were processed before it FAILED" in kept.message
    # A row stored before an all-failed job's empty output was dropped: nothing offered.
    none = {"processed": 2, "succeeded": 0, "failed": 2, "not_processed": 0}
    empty = to_body(_op(State.FAILED, result=[], result_summary=none), NOW)
    assert empty.next_action is None and "partial output" not in empty.message
