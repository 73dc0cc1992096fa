"""Turns an operation row into the body an agent reads, with plain-words messages.

Every message says whether the work is finished and what to do next. Models read
any 2xx as "done" unless told otherwise in words, so the words are the contract.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from app.core.text import degrade
from app.operations.contract import actions, lexicon, timing
from app.operations.contract import wording as W
from app.operations.contract.counted import (
    counted_words,
    failed_with_output,
    has_errors,
    has_output,
    items_were,
    kept_items,
    listed_errors,
    not_succeeded,
    not_succeeded_words,
    unit_of,
    unlisted_words,
    with_errors,
)
from app.operations.contract.schemas import (
    ErrorOut,
    Guarantees,
    HistoryItem,
    HistoryList,
    NextAction,
    OperationBody,
    ProgressOut,
)
from app.operations.domain.estimate import Estimate
from app.operations.domain.models import HistoryEntry
from app.operations.domain.operation import Operation
from app.operations.domain.states import (
    CANCELLING_STATES,
    HUMAN_WHY,
    NEEDS_ATTENTION,
    STATUS_OF,
    AgentStatus,
    State,
    is_done,
)
from app.providers.language.words import SingleCreate

MIN_POLL_AFTER = 5.0  # never invite an agent to check more often than this (seconds)
APPROVAL_CHECK_SECONDS = 60.0  # how soon an agent checks back on a create held for approval
# Error codes of a create the approval gate ended before anything was sent (docs/policy.md).
GATE_ENDS = ("approval_denied", "approval_expired")


def agent_status(op: Operation) -> str:
    """The state's agent status (`states.STATUS_OF`), refined by what the row holds."""
    status = STATUS_OF[op.state]
    if status == AgentStatus.SUCCEEDED and with_errors(op):
        return AgentStatus.COMPLETED_WITH_ERRORS.value
    if status == AgentStatus.PROCESSING and op.cancel_requested_at is not None:
        return AgentStatus.CANCELLING.value
    return status.value


def iso(ts: datetime | None) -> str | None:
    """UTC timestamps as agents read them: ISO 8601 with a Z."""
    return ts.isoformat().replace("+00:00", "Z") if ts else None


def poll_after(op: Operation, now: datetime, cap: float | None = None) -> float | None:
    """Seconds before an agent should ask again: until the next provider read the row
    has scheduled, at least `MIN_POLL_AFTER`. `cap`: the profile's longest gap between
    two reads; never more than it (a row claimed by an observer that holds its poll in
    memory shows the lease expiry as its next read, which the holder reads sooner)."""
    if is_done(op.state):
        return None
    if op.state == State.AWAITING_APPROVAL:  # a person decides: no due time to follow
        return APPROVAL_CHECK_SECONDS
    wait = MIN_POLL_AFTER
    if op.next_poll_at is not None:
        wait = max(wait, (op.next_poll_at - now).total_seconds())
    if cap is not None:
        wait = min(wait, max(MIN_POLL_AFTER, cap))
    return float(math.ceil(wait))


# Said to a human-needing `create_unconfirmed` body only: why the create was not simply
# sent again. In progress, the same guarantee is only in `guarantees.single_create`.
_SINGLE_CREATE_NOTE = {
    SingleCreate.LOOKUP: (
        " This provider does not honour idempotency tokens: jobgate sends a create again "
        "only when the provider proved it started nothing, and otherwise looks the job up "
        "by its reference instead of sending it again."
    ),
    SingleCreate.NONE: (
        " This provider has neither idempotency tokens nor a lookup: jobgate sends a create "
        "again only when the provider proved it started nothing, so a human must check "
        "whether a job exists rather than risk a second one."
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


def _reason(op: Operation) -> str:
    """`: <why it failed>`, quoted only when its words fit a failure (a provider's own
    text may say anything: words of another situation stay in `error.message`)."""
    reason = op.error.get("message") if isinstance(op.error, dict) else None
    if not reason:
        return ""
    if lexicon.leaks(str(reason), lexicon.FINISHED_NOT_SUCCESS):
        return " (the provider's own words are in `error.message`)"
    return f": {str(reason).rstrip().rstrip('.')}"  # the sentence's own full stop follows


def _action(call: str, tool: str | None, mcp: bool, after: float | None = None) -> NextAction:
    """The call, field by field; with MCP on, the tool and its arguments for it."""
    return actions.next_action(call, tool if mcp else None, after)


def message_for(
    op: Operation,
    poll_s: float | None,
    *,
    mcp: bool = False,
    notice_s: float | None = None,
    timed: timing.Timing | None = None,
) -> tuple[str, NextAction | None]:
    """The plain-words message and the next call an agent should make.

    Each situation speaks only its own words (`wording` markers, `lexicon` words): in
    progress, needs a human, finished with success, finished without. `mcp`: name the
    MCP tool beside the REST call. `notice_s`: the longest the gateway waits between two
    reads of the job (its profile's polling cap), said while it is in progress. `timed`:
    how long it ran and will likely run (`timing`), said while it is in progress."""
    state = op.state
    oid = op.id
    status_url = f"/v1/operations/{oid}"
    what = f"The {op.kind} job"
    if state == State.SUCCEEDED:
        if with_errors(op):
            listed = listed_errors(op)
            if not listed:
                act = _action(f"GET {status_url}/result", "get_result", mcp)
                return (
                    f"{what} {W.HAS_FINISHED} with {W.PARTIAL}: {not_succeeded_words(op)}; "
                    f"{unlisted_words(op)}. It was not a full run: report the output together "
                    f"with that count (the output is at {W.how_to_call(act.call, act.tool)}).",
                    act,
                )
            act = _action(f"GET {status_url}/errors?limit=50", "get_errors", mcp)
            some = "" if listed >= not_succeeded(op) else f" ({listed} of them are listed)"
            return (
                f"{what} {W.HAS_FINISHED} with {W.PARTIAL}: {not_succeeded_words(op)}. "
                f"It was not a full run: report the output together with the items that "
                f"{W.FAILED} or never ran, listed at {W.how_to_call(act.call, act.tool)}"
                f"{some} (the output is at GET {status_url}/result).",
                act,
            )
        act = _action(f"GET {status_url}/result", "get_result", mcp)
        late = (
            " It SUCCEEDED before the provider acted on the request to stop it, so the "
            "whole result stands."
            if op.cancel_requested_at is not None
            else ""
        )
        return (
            f"{what} {W.HAS_FINISHED} and {W.SUCCEEDED}; the result was collected and "
            f"checked.{late} {W.MAY_REPORT_SUCCESS}. The result is in `result` or at "
            f"{W.how_to_call(act.call, act.tool)}.",
            act,
        )
    if state == State.FAILED and _error_code(op) in GATE_ENDS:
        return (
            f"{what} {W.HAS_FINISHED} without starting{_reason(op)}. "
            f"{W.REPORT_THE_FAILURE}: nothing was sent to the provider, and sending it again "
            "meets the same policy.",
            None,
        )
    if state == State.FAILED:
        said = (
            f"{what} {W.HAS_FINISHED} and {W.FAILED}{_reason(op)}. "
            f"{W.REPORT_THE_FAILURE}; start a new operation only if the input should change "
            "or the failure was transient."
        )
        if not listed_errors(op) and not_succeeded(op):  # a count no list backs: say so
            stopped = counted_words(not_succeeded(op), unit_of(op))
            said += (
                f" {stopped[0].upper()}{stopped[1:]} {W.FAILED} or never ran; {unlisted_words(op)}."
            )
        if not failed_with_output(op):
            return said, None
        act = _action(f"GET {status_url}/result", "get_result", mcp)
        return (
            f"{said} {items_were(kept_items(op))} processed before it {W.FAILED}: that "
            f"partial output is kept at {W.how_to_call(act.call, act.tool)}. Report it only "
            "as the part of a failed job; the items that failed or never ran are not in it.",
            act,
        )
    if state == State.ABANDONED:
        return (
            f"{what} {W.HAS_FINISHED}: it was {W.ABANDONED} and no more work will happen on "
            f"it. {W.REPORT_THE_FAILURE}; `error` says by whom and why.",
            None,
        )
    if state == State.CANCELLED:
        where = "at the provider" if op.remote_job_id else "before anything was sent to it"
        said = (
            f"{what} {W.HAS_FINISHED}: it was {W.CANCELLED} {where}. "
            f"{W.REPORT_THE_FAILURE}: say that it was cancelled."
        )
        if not has_output(op):
            if not not_succeeded(op):
                return said, None
            if not listed_errors(op):
                stopped = counted_words(not_succeeded(op), unit_of(op))
                return f"{said} It stopped {stopped}; {unlisted_words(op)}.", None
            act = _action(f"GET {status_url}/errors?limit=50", "get_errors", mcp)
            return (
                f"{said} The items it stopped are listed at {W.how_to_call(act.call, act.tool)}.",
                act,
            )
        act = _action(f"GET {status_url}/result", "get_result", mcp)
        tail = ""
        if listed_errors(op):
            tail = f" Those are listed at GET {status_url}/errors."
        elif not_succeeded(op):
            stopped = counted_words(not_succeeded(op), unit_of(op))
            tail = (
                f" {stopped[0].upper()}{stopped[1:]} {W.FAILED} or never ran; {unlisted_words(op)}."
            )
        return (
            f"{said} {items_were(kept_items(op))} processed before the cancel: that "
            f"partial output is kept at {W.how_to_call(act.call, act.tool)}; the items that "
            f"failed or never ran are not in it.{tail}",
            act,
        )
    if state in NEEDS_ATTENTION:
        return (
            f"{what} {W.NEEDS_A_HUMAN}: {HUMAN_WHY[state][1]}. {W.STOPPED}. Do not report "
            f"an outcome, {W.DO_NOT_RETRY} and do not start the work again yourself. "
            f"{W.TELL_THE_USER} that operation {oid} needs a human decision; operators "
            "see it in the attention inbox (GET /v1/attention).",
            None,
        )
    after = poll_s or MIN_POLL_AFTER
    if state == State.AWAITING_APPROVAL:
        return _held_for_approval(op, what, after, mcp)
    act = _action(f"GET {status_url}/wait", "wait_for_operation", mcp, after)
    how = (
        f"Call {W.how_to_call(act.call, act.tool)} for operation {oid}; "
        f"{W.CHECK_AGAIN} {after:g} seconds."
    )
    if notice_s is not None and notice_s > after:
        how += (
            f" The gateway reads the job at the provider at least every {notice_s:g} "
            f"seconds, so it may learn the outcome up to {notice_s:g} seconds after the "
            "provider has it."
        )
    if timed is not None:
        how += timing.sentence(timed)
    if state in CANCELLING_STATES or op.cancel_requested_at is not None:
        return (
            f"A cancel of {what.lower()} was REQUESTED; the job {W.IN_PROGRESS_NOW} at the "
            f"provider until the provider acts on it, and how it ends will be in a later "
            f"answer. {W.KEEP_WAITING}. {W.NOT_YET}. {how}",
            act,
        )
    if not op.remote_job_id:
        started = "is being STARTED"
        if state == State.CREATE_PENDING:  # e.g. a slow create still in flight
            started += " (the provider has not answered the create yet; jobgate keeps at it)"
        return (
            f"{what} {started} and {W.IN_PROGRESS_NOW}. {W.KEEP_WAITING}. {W.NOT_YET}. {how}",
            act,
        )
    return (
        f"{what} has STARTED and {W.IN_PROGRESS_NOW}. {W.KEEP_WAITING}. {W.NOT_YET}. {how}",
        act,
    )


def _error_code(op: Operation) -> str | None:
    return str(op.error.get("code")) if isinstance(op.error, dict) else None


def _held_for_approval(
    op: Operation, what: str, after: float, mcp: bool
) -> tuple[str, NextAction | None]:
    """Recorded, nothing sent: a person must approve it first (docs/policy.md)."""
    gate = op.gate if isinstance(op.gate, dict) else {}
    rule = f" (policy rule {gate['rule']!r})" if gate.get("rule") else ""
    until = f" until {gate['deadline_at']}" if gate.get("deadline_at") else ""
    act = _action(f"GET /v1/operations/{op.id}", "get_operation", mcp, after)
    return (
        f"{what} is {W.NOT_STARTED}: it {W.NEEDS_A_HUMAN} to approve it first{rule}. "
        "Nothing has been sent to the provider. Do not report an outcome, "
        f"{W.DO_NOT_RETRY} and do not send it again. {W.TELL_THE_USER} that operation "
        f"{op.id} is held for a person's approval{until}, then check back with "
        f"{W.how_to_call(act.call, act.tool)} no sooner than {after:g} seconds from now.",
        act,
    )


def outcome_for(op: Operation) -> str | None:
    """Contract v2: the agent status once done, None while not done (the same value on
    every body: create, GET, list, wait, SSE, MCP, callbacks)."""
    return agent_status(op) if is_done(op.state) else None


def to_body(
    op: Operation,
    now: datetime,
    *,
    waited: bool = False,
    mcp: bool = False,
    notice_s: float | None = None,
    estimate: Estimate | None = None,
) -> OperationBody:
    """The body of docs/agent-api.md ("The operation body") for any state: the one
    renderer of every agent body.

    `waited`: the body answers a /wait, so a wait that ended before the operation did
    says `outcome: timed_out`. `mcp`: the MCP server is on, so name its tools too.
    `notice_s`: the profile's polling cap (seconds), said while the job is in progress.
    `estimate`: what similar jobs took (`services/estimates.py`), None when not known."""
    poll_s = poll_after(op, now, notice_s)
    timed = timing.timing(op, now, estimate)
    message, next_action = message_for(op, poll_s, mcp=mcp, notice_s=notice_s, timed=timed)
    single_create = _single_create(op)
    if op.state == State.CREATE_UNCONFIRMED:  # why it was not simply sent again
        message += _SINGLE_CREATE_NOTE.get(single_create, "")
    outcome = outcome_for(op)
    if outcome is None and waited:
        outcome = "timed_out"
        if op.state == State.AWAITING_APPROVAL:
            message = "This call reached its time limit before anyone decided. " + message
        else:
            message = (
                "This wait reached its time limit; the job goes on in the background. " + message
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
        errors_url=f"/v1/operations/{op.id}/errors?limit=50" if has_errors(op) else None,
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
        elapsed_seconds=timed.elapsed_seconds,
        estimate=timed.estimate,
        estimated_seconds_left=timed.estimated_seconds_left,
        expected_done_at=iso(timed.expected_done_at),
        progress_percent=timed.progress_percent,
    )
    return _encodable(body)


def _encodable(body: OperationBody) -> OperationBody:
    """The body, with text no encoder can write (a lone surrogate in a label or result
    stored by an older version) shown as U+FFFD: one bad row must never break a list."""
    dumped = body.model_dump()
    clean = degrade(dumped)
    return body if clean is dumped else OperationBody.model_validate(clean)


def history_json(op_id: str, rows: Iterable[HistoryEntry]) -> dict[str, Any]:
    """The `/history` body (for the API and the ops CLI alike), timestamps ending in Z."""
    listed = HistoryList(
        operation_id=op_id,
        items=[
            HistoryItem(
                id=r.id or 0,
                at=iso(r.at) or "",
                kind=r.kind,
                actor=r.actor,
                from_state=r.from_state,
                to_state=r.to_state,
                cause=r.cause,
                data=r.data,
            )
            for r in rows
        ],
    )
    return degrade(listed.model_dump(mode="json"))  # type: ignore[no-any-return]
