"""What an operation looks like as an MCP task: pure functions over REST bodies.

| operation `status` | task `status` | carries |
| --- | --- | --- |
| `processing`, `cancelling` | `working` | `pollIntervalMs` (`poll_interval_ms`) |
| `awaiting_approval` | `working` | the same; an operator decides with `decide_approval` |
| `needs_attention` | `input_required` | one form elicitation: an operator's decision |
| `succeeded`, `completed_with_errors`, `failed` | `completed` | `result`: `get_operation`'s |
| `cancelled` | `cancelled` | the body's words as `statusMessage` |

`result` is the `get_operation` tool result, `outcome` included. A job that failed at
its provider is a tool call that completed with `outcome: failed`: the extension keeps
task `failed` for JSON-RPC errors, which reading an operation never produces.
docs/mcp.md describes the same table for agents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast, get_args

from mcp.types import CallToolResult

from app.mcp import replies
from jobgate_client import Operation
from jobgate_client.types import Decision

TASK_TOOLS = frozenset({"start_operation", "wait_for_operation"})
DECISIONS: tuple[str, ...] = tuple(d for d in get_args(Decision) if d != "acknowledge")
REASON_MAX = 1000  # characters of an operator's reason passed on
POLL_CAP_S = 300.0  # the longest poll interval an estimate may advise (seconds)

_STATUS = {
    "processing": "working",
    "cancelling": "working",
    "awaiting_approval": "working",  # held for approval: no form here (docs/policy.md)
    "needs_attention": "input_required",
    "cancelled": "cancelled",
}


def operation_of(result: Any) -> Operation | None:
    """The operation body a successful tool result carries, if it carries one."""
    if not isinstance(result, CallToolResult) or result.is_error:
        return None
    body = result.structured_content
    if not isinstance(body, dict) or "operation_id" not in body or "done" not in body:
        return None
    return cast(Operation, body)


def status_of(body: Operation) -> str:
    """The task status of an operation body (the table above)."""
    status = _STATUS.get(body["status"])
    if status is not None:
        return status
    return "completed" if body["done"] else "working"


def _task(body: Operation) -> dict[str, Any]:
    task: dict[str, Any] = {
        "taskId": body["operation_id"],
        "status": status_of(body),
        "statusMessage": body["message"],
        "createdAt": body["created_at"],
        "lastUpdatedAt": body["updated_at"],
        "ttlMs": None,  # an operation is kept; no task expires on its own
    }
    poll = poll_interval_ms(body)
    if poll is not None:
        task["pollIntervalMs"] = poll
    return task


def poll_interval_ms(body: Operation) -> int | None:
    """How long a task client should wait before it reads the task again: the body's
    `poll_after_seconds`, or, when the estimate says the job likely needs longer, its
    `estimated_seconds_left` (at most `POLL_CAP_S`, never sooner than the gateway's own
    next read); None once done. docs/mcp.md, "MCP Tasks"."""
    poll = body.get("poll_after_seconds")
    if poll is None or body["done"]:
        return None
    seconds = float(poll)
    left = body.get("estimated_seconds_left")
    if isinstance(left, int | float) and left > seconds:
        seconds = min(float(left), max(seconds, POLL_CAP_S))
    return max(1, round(seconds * 1000))


def created(body: Operation) -> dict[str, Any]:
    """The `CreateTaskResult` a tool call answers instead of a body not yet done."""
    return {"resultType": "task", **_task(body)}


def detailed(body: Operation) -> dict[str, Any]:
    """The `tasks/get` answer: the task, with its result or its input requests."""
    task = {"resultType": "complete", **_task(body)}
    if task["status"] == "completed":
        result = replies.operation_reply(body)
        task["result"] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    elif task["status"] == "input_required":
        task["inputRequests"] = {input_key(body): _decision_request(body)}
    return task


def input_key(body: Operation) -> str:
    """The key of the one outstanding request: new for every time the operation comes to
    need a person (its state and last update), so an answered key is never asked again."""
    return f"decide:{body['state']}:{body['updated_at']}"


def _decision_request(body: Operation) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": f"{body['message']} Only an operator or admin key may decide; an "
            "agent's key is refused.",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "decision": {
                        "type": "string",
                        "title": "Decision",
                        "enum": list(DECISIONS),
                        "description": "resume_observing: watch the remote job again; "
                        "accept_job: take remote_job_id as the job; retry_collection: fetch "
                        "the result again; abandon: stop all work on it",
                    },
                    "reason": {
                        "type": "string",
                        "title": "Reason",
                        "description": "why, recorded in the operation's history",
                    },
                    "remote_job_id": {
                        "type": "string",
                        "title": "Remote job id",
                        "description": "for accept_job only",
                    },
                },
                "required": ["decision", "reason"],
            },
        },
    }


@dataclass(frozen=True)
class OperatorDecision:
    """What a `tasks/update` answer asks the gateway to record (`POST .../resolve`)."""

    decision: Decision
    reason: str
    remote_job_id: str | None


def decision_of(body: Operation, responses: Mapping[str, Any]) -> OperatorDecision | None:
    """The decision in the answer to the outstanding request, or None when there is none
    to apply: the task does not need a person, the key is not the outstanding one, or the
    person declined."""
    if status_of(body) != "input_required":
        return None
    answer = responses.get(input_key(body))
    if not isinstance(answer, Mapping) or answer.get("action") != "accept":
        return None
    content = answer.get("content")
    if not isinstance(content, Mapping):
        return None
    decision = content.get("decision")
    if decision not in DECISIONS:
        return None
    reason = str(content.get("reason") or "decided through MCP tasks/update")[:REASON_MAX]
    job = content.get("remote_job_id")
    return OperatorDecision(
        cast(Decision, decision), reason, job if isinstance(job, str) and job else None
    )
