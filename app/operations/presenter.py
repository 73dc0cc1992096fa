"""Turns an operation row into the body an agent reads, with plain-words messages.

Every message says whether the work is finished and what to do next. Models read
any 2xx as "done" unless told otherwise in words, so the words are the contract.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from app.core.text import degrade
from app.operations.models import Operation
from app.operations.schemas import ErrorOut, Guarantees, NextAction, OperationBody, ProgressOut
from app.operations.states import (
    CANCELLING_STATES,
    HUMAN_WHY,
    NEEDS_ATTENTION,
    STATUS_OF,
    AgentStatus,
    State,
    is_done,
)
from app.providers.types import SingleCreate

MIN_POLL_AFTER = 5.0  # never invite an agent to check more often than this (seconds)


def agent_status(op: Operation) -> str:
    """The state's agent status (`states.STATUS_OF`), refined by what the row holds."""
    status = STATUS_OF[op.state]
    if status == AgentStatus.SUCCEEDED and failed_items(op):
        return AgentStatus.COMPLETED_WITH_ERRORS.value
    if status == AgentStatus.PROCESSING and op.cancel_requested_at is not None:
        return AgentStatus.CANCELLING.value
    return status.value


def failed_items(op: Operation) -> int:
    summary = op.result_summary if isinstance(op.result_summary, dict) else {}
    return int(summary.get("failed") or 0)


def iso(ts: datetime | None) -> str | None:
    """UTC timestamps as agents read them: ISO 8601 with a Z."""
    return ts.isoformat().replace("+00:00", "Z") if ts else None


def poll_after(op: Operation, now: datetime) -> float | None:
    if is_done(op.state):
        return None
    wait = MIN_POLL_AFTER
    if op.next_poll_at is not None:
        wait = max(wait, (op.next_poll_at - now).total_seconds())
    return float(math.ceil(wait))


# Said in the message while the create may still be in doubt, for providers without a token.
_SINGLE_CREATE_NOTE = {
    SingleCreate.LOOKUP: (
        " This provider does not honour idempotency tokens: jobgate sends the create at "
        "most once and, if its answer is lost, finds the job by its reference instead of "
        "sending it again."
    ),
    SingleCreate.NONE: (
        " This provider has neither idempotency tokens nor a lookup: jobgate sends the "
        "create at most once, and if its answer is lost the operation goes to a human "
        "(needs_attention) rather than risk a second job."
    ),
}


def _single_create(op: Operation) -> SingleCreate:
    try:
        return SingleCreate(op.single_create)
    except ValueError:  # never promise more than was recorded
        return SingleCreate.NONE


def _error(op: Operation) -> ErrorOut | None:
    state = op.state
    if isinstance(op.error, dict) and op.error.get("code"):
        return ErrorOut(
            code=str(op.error["code"]),
            message=str(op.error.get("message") or ""),
            details=op.error.get("details"),
        )
    if not is_done(state) or state == State.SUCCEEDED:
        return None
    if state in NEEDS_ATTENTION:
        return ErrorOut(code=state.value, message=f"Needs a human: {HUMAN_WHY[state][1]}.")
    return ErrorOut(code=state.value, message=f"The operation ended {state.value}.")


def message_for(op: Operation, poll_s: float | None) -> tuple[str, NextAction | None]:
    """The plain-words message and the next call an agent should make."""
    state = op.state
    oid = op.id
    status_url = f"/v1/operations/{oid}"
    wait = f"GET {status_url}/wait"
    what = f"The {op.kind} job"
    if state == State.SUCCEEDED:
        n_failed = failed_items(op)
        late = (
            " The cancel request came too late: the job finished first."
            if (op.cancel_requested_at is not None)
            else ""
        )
        if n_failed:
            return (
                f"{what} FINISHED, but {n_failed} items FAILED (completed with errors)."
                f"{late} Review the failed items at GET {status_url}/errors before reporting "
                "success, and report the failures too.",
                NextAction(call=f"GET {status_url}/errors"),
            )
        return (
            f"{what} has FINISHED and SUCCEEDED; the result was collected and checked.{late} "
            f"You may report success. The result is in `result` or at GET {status_url}/result.",
            NextAction(call=f"GET {status_url}/result"),
        )
    if state == State.FAILED:
        reason = op.error.get("message") if isinstance(op.error, dict) else None
        return (
            f"{what} has FINISHED and FAILED{': ' + reason if reason else ''}. "
            "Do not report success. Report the failure; start a new operation only if "
            "the input should change or the failure was transient.",
            None,
        )
    if state == State.ABANDONED:
        return (
            f"{what} was ABANDONED by an operator; no more work will happen. "
            "Do not report success. See `error` for who decided and why.",
            None,
        )
    if state == State.CANCELLED:
        return (
            f"{what} was CANCELLED, and the provider confirmed it. It did not succeed. "
            "Do not report success.",
            None,
        )
    if state in NEEDS_ATTENTION:
        return (
            f"{what} is NOT finished successfully and NEEDS A HUMAN: {HUMAN_WHY[state][1]}. "
            "Do not report success and do not start the work again yourself. "
            f"Tell the user that operation {oid} needs attention (GET /v1/attention).",
            NextAction(call="GET /v1/attention"),
        )
    after = poll_s or MIN_POLL_AFTER
    if state in CANCELLING_STATES or op.cancel_requested_at is not None:
        return (
            f"Cancellation of {what.lower()} was REQUESTED but is NOT confirmed yet; the job "
            "may still finish. Do not report it as cancelled. "
            f"Call wait_for_operation({oid}) or {wait}; check again in at least {after:g} seconds.",
            NextAction(call=wait, after_seconds=after),
        )
    started = "has STARTED" if op.remote_job_id else "is being STARTED"
    return (
        f"{what} {started} and is NOT finished. Do not report success. "
        f"Call wait_for_operation({oid}) or {wait}; check again in at least {after:g} seconds.",
        NextAction(call=wait, after_seconds=after),
    )


def to_body(op: Operation, now: datetime, *, outcome: str | None = None) -> OperationBody:
    """The SPEC section 4 body for any state."""
    poll_s = poll_after(op, now)
    message, next_action = message_for(op, poll_s)
    single_create = _single_create(op)
    if not is_done(op.state) or op.state == State.CREATE_UNCONFIRMED:
        message += _SINGLE_CREATE_NOTE.get(single_create, "")
    if outcome == "timed_out":
        message = (
            f"The wait ended but the operation is NOT finished: it continues in the background. "
            f"Do not report success. Check later with GET /v1/operations/{op.id}/wait "
            f"(operation id {op.id}). " + message
        )
    progress = None
    if op.progress_completed is not None or op.progress_total is not None:
        progress = ProgressOut(completed=op.progress_completed, total=op.progress_total)
    summary = op.result_summary if isinstance(op.result_summary, dict) else None
    done_ok = op.state == State.SUCCEEDED
    result: Any = op.result if done_ok else None
    body = OperationBody(
        operation_id=op.id,
        status=agent_status(op),
        done=is_done(op.state),
        state=op.state,
        message=message,
        next_action=next_action,
        poll_after_seconds=poll_s,
        status_url=f"/v1/operations/{op.id}",
        provider=op.provider,
        kind=op.kind,
        remote_job_id=op.remote_job_id,
        remote_state=op.remote_state,
        progress=progress,
        result=result,
        result_url=f"/v1/operations/{op.id}/result" if done_ok else None,
        result_summary=summary,
        errors_url=f"/v1/operations/{op.id}/errors?limit=50" if failed_items(op) else None,
        error=_error(op),
        trace_id=op.trace_id,
        labels=op.labels or {},
        created_at=iso(op.created_at) or "",
        updated_at=iso(op.updated_at) or "",
        deadlines={
            "create_at": iso(op.create_deadline_at),
            "result_at": iso(op.result_deadline_at),
            "cancel_at": iso(op.cancel_deadline_at),
        },
        guarantees=Guarantees(single_create=single_create),
        outcome=outcome,
    )
    return _encodable(body)


def _encodable(body: OperationBody) -> OperationBody:
    """The body, with text no encoder can write (a lone surrogate in a label or result
    stored by an older version) shown as U+FFFD: one bad row must never break a list."""
    dumped = body.model_dump()
    clean = degrade(dumped)
    return body if clean is dumped else OperationBody.model_validate(clean)
