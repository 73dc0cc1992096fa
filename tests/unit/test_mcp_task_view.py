"""An operation body as an MCP task (app/mcp/task_view.py): pure, no gateway."""

from __future__ import annotations

from typing import Any, cast

import pytest
from mcp.types import CallToolResult, TextContent

from app.mcp import task_view
from jobgate_client import Operation

OP_ID = "op_01JD7ZQ6R4X0P8V6N1K2M3B4F0"


def body(status: str, *, done: bool, **kw: Any) -> Operation:
    out: dict[str, Any] = {
        "operation_id": OP_ID,
        "status": status,
        "done": done,
        "state": kw.pop("state", "observing"),
        "message": f"The job is {status}.",
        "poll_after_seconds": kw.pop("poll", 2.5),
        "created_at": "2026-12-03T10:00:00Z",
        "updated_at": "2026-12-03T10:05:00Z",
        "outcome": kw.pop("outcome", None),
        "next_action": None,
    }
    out.update(kw)
    return cast(Operation, out)


@pytest.mark.parametrize(
    ("status", "done", "task"),
    [
        ("processing", False, "working"),
        ("cancelling", False, "working"),
        ("needs_attention", True, "input_required"),
        ("succeeded", True, "completed"),
        ("completed_with_errors", True, "completed"),
        ("failed", True, "completed"),
        ("cancelled", True, "cancelled"),
    ],
)
def test_each_status_maps_to_the_documented_task_status(status: str, done: bool, task: str) -> None:
    assert task_view.status_of(body(status, done=done)) == task


def test_a_working_task_polls_at_the_operations_pace_and_never_expires() -> None:
    created = task_view.created(body("processing", done=False, poll=2.5))
    assert created == {
        "resultType": "task",
        "taskId": OP_ID,
        "status": "working",
        "statusMessage": "The job is processing.",
        "createdAt": "2026-12-03T10:00:00Z",
        "lastUpdatedAt": "2026-12-03T10:05:00Z",
        "ttlMs": None,
        "pollIntervalMs": 2500,
    }
    assert task_view.created(body("processing", done=False, poll=0.0001))["pollIntervalMs"] == 1
    assert "pollIntervalMs" not in task_view.created(body("processing", done=False, poll=None))


def test_a_completed_task_carries_the_get_operation_result_with_the_outcome() -> None:
    done = body("failed", done=True, outcome="failed", poll=None)
    task = task_view.detailed(done)
    assert task["resultType"] == "complete" and task["status"] == "completed"
    result = CallToolResult.model_validate(task["result"])
    assert not result.is_error  # the call completed; the job's verdict is `outcome`
    assert result.structured_content == dict(done)
    assert result.content == [TextContent(type="text", text="The job is failed.")]
    assert "inputRequests" not in task


def test_a_task_that_needs_a_person_asks_one_keyed_form_question() -> None:
    stuck = body("needs_attention", done=True, state="result_validation_failed")
    task = task_view.detailed(stuck)
    [(key, request)] = task["inputRequests"].items()
    assert key == task_view.input_key(stuck) and "result_validation_failed" in key
    schema = request["params"]["requestedSchema"]
    assert request["method"] == "elicitation/create" and request["params"]["mode"] == "form"
    assert schema["properties"]["decision"]["enum"] == list(task_view.DECISIONS)
    assert "acknowledge" not in task_view.DECISIONS and "abandon" in task_view.DECISIONS
    assert schema["required"] == ["decision", "reason"]
    assert "result" not in task
    # Moving on (a later update) makes a new key: an answered one is never asked again.
    later = body(
        "needs_attention", done=True, state="result_validation_failed", updated_at="2026-12-04"
    )
    assert task_view.input_key(later) != key


def test_only_an_accepted_answer_to_the_outstanding_key_is_a_decision() -> None:
    stuck = body("needs_attention", done=True, state="stalled")
    key = task_view.input_key(stuck)
    accept = {"action": "accept", "content": {"decision": "abandon", "reason": "r" * 2000}}
    decision = task_view.decision_of(stuck, {key: accept})
    assert decision is not None and decision.decision == "abandon"
    assert len(decision.reason) == task_view.REASON_MAX and decision.remote_job_id is None
    job = {"action": "accept", "content": {"decision": "accept_job", "remote_job_id": "j-1"}}
    taken = task_view.decision_of(stuck, {key: job})
    assert taken is not None and taken.remote_job_id == "j-1" and taken.reason
    for ignored in (
        {"decide:other": accept},  # not the outstanding key
        {key: {"action": "decline"}},
        {key: {"action": "accept", "content": {"decision": "acknowledge"}}},
        {key: {"action": "accept", "content": "abandon"}},
        {key: "abandon"},
    ):
        assert task_view.decision_of(stuck, ignored) is None, ignored
    assert task_view.decision_of(body("processing", done=False), {key: accept}) is None


def test_only_an_unfinished_operation_body_becomes_a_task() -> None:
    ok = CallToolResult(content=[], structured_content=dict(body("processing", done=False)))
    refused = CallToolResult(content=[], structured_content={"error": {}}, is_error=True)
    listing = CallToolResult(content=[], structured_content={"items": []})
    assert task_view.operation_of(ok) is not None
    assert task_view.operation_of(refused) is None
    assert task_view.operation_of(listing) is None
    assert task_view.operation_of({"resultType": "task"}) is None


@pytest.mark.parametrize(
    ("poll", "left", "expected_ms"),
    [
        (5.0, None, 5_000),  # no estimate: the gateway's own advice
        (5.0, 2.0, 5_000),  # never sooner than the gateway's next read
        (5.0, 40.0, 40_000),  # the estimate says it likely needs 40 s more
        (5.0, 10_000.0, 300_000),  # capped
        (600.0, 10_000.0, 600_000),  # the gateway's own advice is longer than the cap
    ],
)
def test_poll_interval_follows_the_estimate(
    poll: float, left: float | None, expected_ms: int
) -> None:
    working = body("processing", done=False, poll=poll, estimated_seconds_left=left)
    assert task_view.created(working)["pollIntervalMs"] == expected_ms
    from app.mcp import legacy_tasks

    assert legacy_tasks.task_of(working)["pollInterval"] == expected_ms
    said = "Similar jobs took about 50 seconds (median of 9); about 40 more seconds is likely."
    with_words = body("processing", done=False, message=said, estimated_seconds_left=left)
    assert task_view.created(with_words)["statusMessage"] == said  # the body's own words
    done = body("succeeded", done=True, poll=None, estimated_seconds_left=None)
    assert "pollIntervalMs" not in task_view.detailed(done)
