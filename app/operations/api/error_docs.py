"""The error answers of the agent API as OpenAPI documents them: schema and examples.

Every 4xx/5xx entry names its schema (`ErrorBody`, or `ErrorWithOperation` when the
error is about an existing operation and carries its body) and one example per
error code the route can answer with. docs/agent-api.md explains every code.
"""

from __future__ import annotations

from typing import Any

from app.core.db import write_faults
from app.core.http import fault_words
from app.core.http.errors import verdict_of
from app.operations.contract.schemas import ErrorBody, ErrorWithOperation

OP = "op_01JD7ZQ6R4X0P8V6N1K2M3B4C5"


def _fault_example(kind: str) -> str:
    """A fault's words for a create whose intent was recorded (the answer other calls
    get is in docs/operations.md, "What a 503 says")."""
    create = fault_words.CreateInterrupted("recorded", OP)
    retry = write_faults.RETRY_AFTER_SECONDS
    return fault_words.words(kind, "create", retry, create)[0]


_BODY_EXAMPLE: dict[str, Any] = {  # abridged: the full body is OperationBody
    "operation_id": OP,
    "status": "succeeded",
    "done": True,
    "state": "succeeded",
    "outcome": "succeeded",
    "message": "The report job has FINISHED and SUCCEEDED; the result was collected and "
    f"checked. You may report success. The result is in `result` or at GET "
    f"/v1/operations/{OP}/result.",
    "next_action": {
        "call": f"GET /v1/operations/{OP}/result",
        "method": "GET",
        "path": f"/v1/operations/{OP}/result",
        "query": None,
        "tool": "get_result",
        "arguments": {"operation_id": OP},
    },
}

_RUNNING_EXAMPLE: dict[str, Any] = {
    "operation_id": OP,
    "status": "processing",
    "done": False,
    "state": "observing",
    "outcome": None,
    "message": "The report job has STARTED and is IN PROGRESS. KEEP WAITING. Do not report "
    f"an outcome yet. Call GET /v1/operations/{OP}/wait (MCP tool wait_for_operation) for "
    f"operation {OP}; check again in at least 30 seconds.",
    "next_action": {
        "call": f"GET /v1/operations/{OP}/wait",
        "method": "GET",
        "path": f"/v1/operations/{OP}/wait",
        "query": None,
        "tool": "wait_for_operation",
        "arguments": {"operation_id": OP, "timeout_seconds": 30},
        "after_seconds": 30,
    },
}

# code -> (HTTP status, an example message)
CODES: dict[str, tuple[int, str]] = {
    "malformed_json": (400, "The request body is not valid JSON."),
    "idempotency_key_required": (
        400,
        "The Idempotency-Key header is required: choose one unique key per logical "
        "operation (e.g. a UUID) and send the same key on every retry of it.",
    ),
    "idempotency_key_invalid": (400, "The Idempotency-Key must be printable ASCII."),
    "invalid_cursor": (400, "The cursor is not one this listing handed out."),
    "unauthorized": (401, "An API key is required: send Authorization: Bearer <key>."),
    "forbidden": (403, "This call needs an operator or admin key."),
    "own_operation": (
        403,
        "'ops-1' created this operation, so it may not approve it: another operator's key "
        "must decide.",
    ),
    "not_awaiting_approval": (
        409,
        "Operation is observing; only a create held for approval can be approved or denied.",
    ),
    "operation_not_found": (404, f"No operation '{OP}' for this caller."),
    "operation_pruned": (
        410,
        f"The report operation {OP} has FINISHED and SUCCEEDED on 2026-11-02T09:30:00Z; its "
        "record was removed after the retention period, so its result can no longer be read "
        "here. Nothing was started: this Idempotency-Key belongs to that operation. Do not "
        "send it again; new work needs a new key.",
    ),
    "operation_done": (
        409,
        "The operation is already done (succeeded); there is nothing to stop and nothing "
        "was sent to the provider.",
    ),
    "result_not_available": (
        409,
        "No result: the operation is observing (processing).",
    ),
    "not_needing_attention": (
        409,
        "Operation is succeeded; only needs-attention states can be resolved.",
    ),
    "remote_job_unknown": (409, "No remote job id is known; use accept_job with the verified id."),
    "decision_not_allowed": (409, "The decision does not fit the operation's state."),
    "remote_job_bound": (
        409,
        f"Job batch_123 at openai_batch is already bound to operation {OP} (observing); "
        "accepting it here would have two operations follow one job. Nothing was written.",
    ),
    "remote_job_unverified": (
        409,
        "jobgate could not check job batch_123 at openai_batch (the provider answered HTTP "
        "503), and accepts no job it has not seen. Nothing was written.",
    ),
    "remote_job_unproven": (
        409,
        "The provider shows nothing that proves job msgbatch_123 is op_...'s: no client "
        "reference, no item ids to compare, no lookup listing it. Nothing was written. Send "
        "the same decision with force: true, or abandon it.",
    ),
    "operation_changed": (409, "The operation changed; read it again."),
    "nothing_to_acknowledge": (
        409,
        "acknowledge applies to completed-with-errors results in the inbox.",
    ),
    "body_too_large": (413, "The request body is larger than 262144 bytes."),
    "too_many_held": (
        429,
        "This key already holds 100 waits or event streams open, the most one key may.",
    ),
    "policy_in_flight_limit": (
        429,
        "NOT started and nothing recorded: this key already has 2 operations in flight under "
        "policy rule 'rule 1', the most it allows (2). Send the same request again, with the "
        "same Idempotency-Key, once one of them is done (GET /v1/operations?in_flight=true "
        "lists them). Nothing was sent to the provider.",
    ),
    "policy_rate_limit": (
        429,
        "NOT started and nothing recorded: this key started 10 creates in the last minute "
        "under policy rule 'rule 1', the most it allows (10). Send the same request again, "
        "with the same Idempotency-Key, in 12 seconds (Retry-After). Nothing was sent to the "
        "provider.",
    ),
    "policy_budget_exhausted": (
        429,
        "NOT started and nothing recorded: this create costs 5 cost units and this key has "
        "spent 98 of the 100 policy rule 'rule 1' allows per UTC day. Send the same request "
        "again, with the same Idempotency-Key, when the day's budget starts over in 3600 "
        "seconds (Retry-After), or ask for a larger budget. Nothing was sent to the provider.",
    ),
    "invalid_request": (422, "The request does not match the schema; see details.errors."),
    "invalid_value": (422, "Invalid value at /input/text: it contains a NUL character."),
    "idempotency_key_reused": (
        422,
        "This Idempotency-Key was used with a different request; use the same key only "
        "for retries of the same request.",
    ),
    "unknown_provider": (422, "No provider profile named 'acme'."),
    "unknown_kind": (422, "Provider 'mock' has no kind 'poem'."),
    "provider_unavailable": (422, "Provider 'openai' is not configured on this gateway."),
    "gateway_option_in_input": (
        422,
        "`input.validation` is a gateway option, not part of the provider's input: send it "
        "beside `input`, as the top-level field `validation` of the create request.",
    ),
    "callback_url_forbidden": (422, "callback_url points at a private address."),
    "unknown_state": (422, "No state 'running'."),
    "unknown_status": (422, "No status 'running'."),
    "invalid_label": (422, "The label filter must be key=value."),
    "remote_job_id_required": (
        422,
        "accept_job needs remote_job_id: the job the operator verified.",
    ),
    "remote_job_mismatch": (
        422,
        "Job msgbatch_123 is not this operation's: it holds 3 items and this operation's "
        "input has 6. Nothing was written.",
    ),
    "result_deadline_required": (
        409,
        "The result deadline has passed; give result_deadline_seconds.",
    ),
    "webhook_signature_invalid": (401, "Webhook rejected: the signature does not match."),
    "webhooks_not_configured": (404, "Provider 'mock' declares no webhooks."),
    "webhook_secret_unset": (
        503,
        "Webhooks for 'mock' are not accepted: JOBGATE_MOCK_WEBHOOK_SECRET is not set.",
    ),
    "webhook_secret_invalid": (503, "The configured webhook secret is not valid base64."),
    "internal_error": (500, "The gateway hit an internal error; nothing was reported as done."),
    "storage_full": (507, _fault_example("storage_full")),
    "database_busy": (503, _fault_example("database_busy")),
    "database_unavailable": (503, _fault_example("database_unavailable")),
}
# Codes whose answer carries the operation's body beside the error.
ABOUT_OPERATION = frozenset(
    {
        "operation_done",
        "not_awaiting_approval",
        "result_not_available",
        "not_needing_attention",
        "remote_job_unknown",
        "decision_not_allowed",
        "operation_changed",
        "nothing_to_acknowledge",
        "remote_job_id_required",
        "result_deadline_required",
        "remote_job_bound",
        "remote_job_unverified",
        "remote_job_mismatch",
        "remote_job_unproven",
    }
)
# Every route may answer these.
COMMON = (
    "unauthorized",
    "body_too_large",
    "invalid_request",
    "malformed_json",
    "internal_error",
    "storage_full",
    "database_busy",
    "database_unavailable",
)
BY_ID = (*COMMON, "operation_not_found", "operation_pruned")


def _example(code: str) -> dict[str, Any]:
    message = CODES[code][1]
    value: dict[str, Any] = {"error": {"code": code, "message": message, "details": {}}}
    if code in ABOUT_OPERATION:
        body = _RUNNING_EXAMPLE if code == "result_not_available" else _BODY_EXAMPLE
        value["error"]["message"] = f"{message} {body['message']}"  # as error_response says it
        value.update(verdict_of(body))
        value["operation"] = body
    return {"summary": code, "value": value}


def responses(*codes: str | tuple[str, int]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries for these error codes, grouped by HTTP status (a
    `(code, status)` pair where a route answers a code with another status)."""
    by_status: dict[int, list[str]] = {}
    for entry in dict.fromkeys(codes):
        code, status = entry if isinstance(entry, tuple) else (entry, CODES[entry][0])
        by_status.setdefault(status, []).append(code)
    out: dict[int | str, dict[str, Any]] = {}
    for status, group in sorted(by_status.items()):
        about = all(c in ABOUT_OPERATION for c in group)
        out[status] = {
            "model": ErrorWithOperation if about else ErrorBody,
            "description": ", ".join(f"`{c}`" for c in group),
            "content": {"application/json": {"examples": {c: _example(c) for c in group}}},
        }
    return out
