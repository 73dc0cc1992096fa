"""No word of one situation in another's words, on any channel (docs/agent-api.md,
"Three situations, three vocabularies"; the words are in contract/lexicon.py).

Every state, with the variants an agent can meet (partial, cancel requested, a late
cancel, a timed-out wait, kept partial output, an expired batch, one item and many),
for each single-create capability, with and without a polling cap to state, is
rendered by the real renderer and passed through each channel's own code: the REST
body, the SSE `done` event, the MCP tool result (text and structured), the callback
payload, and a 409 about the operation. Any foreign word fails the test, and a
planted one is shown to be caught.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from app.callbacks.outbox import completion_payload
from app.core.http.errors import error_response
from app.mcp import replies
from app.operations.contract import lexicon as L
from app.operations.contract import wording as W
from app.operations.contract.presenter import agent_status, to_body
from app.operations.domain.operation import Operation
from app.operations.domain.states import State, is_done
from jobgate_client import ConflictError
from tests.support.operation_rows import NOW
from tests.support.operation_rows import an_operation as _op

CAPABILITIES = ("token", "lookup", "none")
# The gateway's own words for a cancel of a done operation (services/cancellation.py).
DONE_409 = (
    "The operation is already done ({state}); there is nothing to stop and nothing was "
    "sent to the provider."
)


def _counts(ok: int, failed: int, never: int) -> dict[str, int]:
    return {"processed": ok + failed + never, "succeeded": ok, "failed": failed,
            "not_processed": never}  # fmt: skip


def variants() -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(label, row fields, waited) for every state and every variant of one."""
    for state in State:
        yield state.value, {"state": state}, False
        yield f"{state.value}/waited", {"state": state}, True
        yield f"{state.value}/no-remote-job", {"state": state, "remote_job_id": None}, False
        yield f"{state.value}/cancel-asked", {"state": state, "cancel_requested_at": NOW}, False
    ok = State.SUCCEEDED
    for failed, never in ((1, 0), (5, 0), (0, 1), (0, 3), (2, 1), (0, 0)):
        summary = _counts(10, failed, never)
        extra = {"outcome": "completed_with_errors"} if not failed and not never else {}
        yield f"partial/{failed}-{never}", {"state": ok, "result_summary": summary, **extra}, False
        late = {"state": ok, "result_summary": summary, "cancel_requested_at": NOW, **extra}
        yield f"partial-late-cancel/{failed}-{never}", late, False
    yield "succeeded/with-counts", {"state": ok, "result_summary": _counts(3, 0, 0)}, False
    for n in (1, 4):
        kept = {"result": [{"i": i} for i in range(n)], "result_summary": _counts(n, 1, 2)}
        yield f"cancelled/kept-{n}", {"state": State.CANCELLED, **kept}, False
        failed_kept = {
            "state": State.FAILED,
            "error": {"code": "remote_failed", "message": "the job stopped early"},
            **kept,
        }
        yield f"failed/kept-{n}", failed_kept, False
    stopped = {"state": State.CANCELLED, "result_summary": _counts(0, 0, 4)}
    yield "cancelled/items-stopped", stopped, False
    reasons = {
        "expired": "the provider reports the job as EXPIRED",
        "provider-text": "Invalid input: field 'x' is required",
        "provider-people-words": "please confirm the payment with a human operator",
        "provider-success-words": "completed 0 of 3 requests successfully",
    }
    for name, reason in reasons.items():
        error = {"code": "remote_failed", "message": reason}
        yield f"failed/{name}", {"state": State.FAILED, "error": error}, False
    abandoned = {"code": "abandoned", "message": "Abandoned by ops: duplicate"}
    yield "abandoned/by-someone", {"state": State.ABANDONED, "error": abandoned}, False


CASES = [
    (f"{label}/{cap}/{'cap' if notice else 'no-cap'}", {**fields, "single_create": cap}, waited,
     notice)
    for label, fields, waited in variants()
    for cap in CAPABILITIES
    for notice in (None, 600.0)
]  # fmt: skip


def channel_texts(op: Operation, waited: bool, notice: float | None) -> dict[str, list[str]]:
    """The words each channel carries for this operation, rendered by its own code."""
    rest = to_body(op, NOW, waited=waited, notice_s=notice).model_dump(mode="json")
    on_mcp = to_body(op, NOW, waited=waited, mcp=True, notice_s=notice).model_dump(mode="json")
    sse = json.loads(json.dumps(rest))  # the `done` event's data is the body as JSON
    tool = replies.operation_reply(on_mcp)
    assert tool.structured_content is not None
    texts: dict[str, list[str]] = {
        "rest": [rest["message"]],
        "sse": [sse["message"]],
        "mcp-text": [c.text for c in tool.content if c.type == "text"],
        "mcp-structured": [tool.structured_content["message"]],
    }
    if is_done(op.state):
        texts["callback"] = [completion_payload(op, NOW)["data"]["message"]]
    said = DONE_409.format(state=agent_status(op))
    refusal = json.loads(error_response(409, "operation_done", said, operation=rest).body)
    texts["409"] = [refusal["message"], refusal["error"]["message"]]
    refused = replies.refused(
        ConflictError(409, "result_not_available", refusal["error"]["message"], {}, on_mcp),
        on_mcp,
    )
    assert refused.structured_content is not None
    texts["mcp-409"] = [c.text for c in refused.content if c.type == "text"]
    texts["mcp-409"].append(refused.structured_content["message"])
    return texts


def leaks_of(op: Operation, waited: bool, notice: float | None) -> dict[str, list[str]]:
    """Foreign words per channel (empty when every channel is clean)."""
    status = to_body(op, NOW).status
    situation = L.situation_of(status)
    found: dict[str, list[str]] = {}
    for channel, texts in channel_texts(op, waited, notice).items():
        words = [w for t in texts for w in L.leaks(t, situation)]
        if words:
            found[channel] = words
    return found


@pytest.mark.parametrize(("label", "fields", "waited", "notice"), CASES, ids=[c[0] for c in CASES])
def test_no_channel_carries_a_word_of_another_situation(
    label: str, fields: dict[str, Any], waited: bool, notice: float | None
) -> None:
    op = _op(**fields)
    found = leaks_of(op, waited, notice)
    assert not found, f"{label}: {found}\n{to_body(op, NOW, waited=waited).message}"


def test_the_situations_own_disjoint_words_but_the_finished_ones() -> None:
    groups = [L.WAITING_WORDS, L.PEOPLE_WORDS, L.SUCCESS_WORDS, L.FAILURE_WORDS]
    assert L.disjoint(groups)
    assert L.disjoint([*groups, L.FINISHED_WORDS])
    for marker in (*W.IN_PROGRESS, *W.NEEDS_HUMAN):  # the markers obey the lexicon too
        named = L.situations_named(marker)
        assert len(named) <= 1, (marker, named)


def test_a_planted_word_is_caught_on_every_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    op = _op(State.OBSERVING)
    assert leaks_of(op, False, None) == {}
    monkeypatch.setattr(W, "KEEP_WAITING", "KEEP WAITING for a human to review it")
    found = leaks_of(op, False, None)
    assert set(found) == {"rest", "sse", "mcp-text", "mcp-structured", "409", "mcp-409"}
    assert all(set(words) == {"human", "review"} for words in found.values()), found


def test_a_planted_success_word_in_a_failure_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    op = _op(State.FAILED)
    assert leaks_of(op, False, None) == {}
    monkeypatch.setattr(W, "REPORT_THE_FAILURE", "Report the failure, not a success")
    assert set(leaks_of(op, False, None)) >= {"rest", "callback", "409", "mcp-text"}


def test_identifiers_are_codes_not_words() -> None:
    assert L.leaks("state result_validation_failed; call wait_for_operation", "needs_human") == []
    assert L.leaks("GET /v1/operations/op_1/wait", L.FINISHED_SUCCESS) == ["wait"]


def test_an_expired_batch_says_expired_and_gives_no_2xx_as_the_reason() -> None:
    error = {"code": "remote_failed", "message": "the provider reports the job as EXPIRED"}
    body = to_body(_op(State.FAILED, remote_state="expired", error=error), NOW)
    assert "FAILED: the provider reports the job as EXPIRED" in body.message
    assert "HTTP 200" not in body.message


@pytest.mark.parametrize(
    ("failed", "never", "words"),
    [
        (1, 0, "1 item of 11 FAILED"),
        (5, 0, "5 items of 15 FAILED"),
        (0, 1, "1 item was never processed (the job EXPIRED or was CANCELLED before it ran)"),
        (0, 3, "3 items were never processed (the job EXPIRED or was CANCELLED before they"),
        (2, 1, "2 items of 13 FAILED and 1 item was never processed"),
    ],
)
def test_partial_counts_read_right_for_one_and_many(failed: int, never: int, words: str) -> None:
    op = _op(State.SUCCEEDED, result_summary=_counts(10, failed, never))
    body = to_body(op, NOW)
    assert body.status == "completed_with_errors"
    assert words in body.message, body.message


def test_the_single_create_guarantee_is_in_guarantees_not_in_progress_words() -> None:
    for cap in CAPABILITIES:
        body = to_body(_op(State.CREATE_UNKNOWN, single_create=cap, remote_job_id=None), NOW)
        assert body.guarantees.single_create == cap
        assert "idempotency" not in body.message and "second job" not in body.message
    human = to_body(_op(State.CREATE_UNCONFIRMED, single_create="none"), NOW)
    assert "a human must check whether a job exists" in human.message


def test_in_progress_words_say_how_late_the_end_may_be_seen() -> None:
    body = to_body(_op(State.OBSERVING), NOW, notice_s=600)
    assert "may learn the outcome up to 600 seconds after the provider has it" in body.message
    quick = to_body(_op(State.OBSERVING), NOW, notice_s=2)  # no later than the next check
    assert "may learn the outcome" not in quick.message
    done = to_body(_op(State.SUCCEEDED), NOW, notice_s=600)
    assert "may learn the outcome" not in done.message


def test_a_409_carries_the_operations_verdict_at_the_top() -> None:
    body = to_body(_op(State.SUCCEEDED), NOW).model_dump(mode="json")
    answer = json.loads(
        error_response(409, "operation_done", "Nothing to cancel.", operation=body).body
    )
    for field in ("done", "outcome", "message", "next_action"):
        assert answer[field] == body[field], field
    assert answer["error"]["message"] == f"Nothing to cancel. {body['message']}"
    assert answer["operation"] == body


def test_every_listed_word_carries_a_stem_of_its_own_situation() -> None:
    for situation, listed in L.OWNED.items():
        for word in listed:
            assert situation in L.owners(word), (situation, word)


def test_stems_catch_what_whole_words_missed() -> None:
    # A reader matching keywords sees `cancel` in all of these; so does the lexicon.
    for word in ("cancel", "cancels", "cancelled", "cancellation", "canceling"):
        assert L.owners(word) == {L.IN_PROGRESS, L.FINISHED_NOT_SUCCESS}, word
    said = "It SUCCEEDED before the provider acted on the cancel request."
    assert L.leaks(said, L.FINISHED_SUCCESS) == ["cancel"]
    assert L.leaks("the approval is pending", L.FINISHED_SUCCESS) == ["approval", "pending"]
    assert L.owners("unsuccessful") == {L.FINISHED_NOT_SUCCESS}
    assert L.owners("wait_for_operation") == frozenset()  # a code, not a word


def test_only_cancel_and_the_finished_stems_are_shared() -> None:
    seen: dict[str, set[str]] = {}
    for situation, stems in L.STEMS.items():
        for stem in stems:
            seen.setdefault(stem, set()).add(situation)
    shared = {stem: owners for stem, owners in seen.items() if len(owners) > 1}
    assert shared == {
        "cancel": {L.IN_PROGRESS, L.FINISHED_NOT_SUCCESS},
        "finish": {L.FINISHED_SUCCESS, L.FINISHED_NOT_SUCCESS},
        "ended": {L.FINISHED_SUCCESS, L.FINISHED_NOT_SUCCESS},
    }


@pytest.mark.parametrize("state", [s for s in State if not is_done(s)])
@pytest.mark.parametrize("elapsed", [0.0, 20.0, 500.0])
def test_the_estimate_speaks_in_progress_words(state: State, elapsed: float) -> None:
    from datetime import timedelta

    from app.operations.domain.estimate import estimate_of

    est = estimate_of([10.0, 20.0, 30.0, 40.0, 50.0], min_jobs=5)
    op = _op(state, created_at=NOW - timedelta(seconds=elapsed))
    for mcp in (False, True):
        body = to_body(op, NOW, mcp=mcp, estimate=est)
        assert not L.leaks(body.message, L.situation_of(body.status)), body.message
    if state != State.AWAITING_APPROVAL:
        assert ("longer than 90% of similar jobs" in body.message) == (elapsed > 46)
