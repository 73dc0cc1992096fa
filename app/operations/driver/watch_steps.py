"""Steps that watch a known remote job: observing, cancelling, and their deadlines."""

from __future__ import annotations

from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import Evidence, EvidenceKind, State
from app.operations.driver import read_failures
from app.operations.driver.decision import Decision, needs_human
from app.operations.driver.partial import keep_partial
from app.operations.driver.step_common import (
    SUCCESS,
    deadline_passed,
    delay_for,
    exchanges_of,
    first_delay,
    observation_of,
    provider_error,
    read_status,
    remote_fields,
    worker_tag,
)
from app.providers.answers.outcome import outcome
from app.providers.calls.types import CallResult, Outcome
from app.providers.language.profile import Profile
from app.providers.language.words import RemoteClass


async def step_accepted(
    ctx: AppContext, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    if op.cancel_requested_at is not None:
        return _to_cancel_requested(op)
    return Decision(
        State.OBSERVING,
        "lease owner started polling",
        Evidence(EvidenceKind.LEASE_OWNER),
        {"poll_attempt": 0},
        again=True,
        defer=True,  # nothing is learnt: a crash before it is written finds `accepted` again
    )


def _to_cancel_requested(op: Operation) -> Decision:
    return Decision(
        State.CANCEL_REQUESTED,
        "cancel intent recorded earlier is now applied",
        Evidence(EvidenceKind.CANCEL_INTENT, {"by": op.cancel_requested_by}),
        again=True,
    )


async def _read_status(
    ctx: AppContext, profile: Profile, op: Operation, *, cancelling: bool
) -> Decision:
    """One status read of the remote job and what it decides (partial output kept)."""
    res = await read_status(ctx, profile, op)
    decided = decide_status(ctx, profile, op, res, cancelling=cancelling)
    return await keep_partial(ctx, profile, op, res, decided)


async def step_observing(
    ctx: AppContext, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    if op.cancel_requested_at is not None:
        return _to_cancel_requested(op)
    decision = await _read_status(ctx, profile, op, cancelling=False)
    if decision.to is None and deadline_passed(op.result_deadline_at, ctx.now()):
        # Even a deadline that passed while no process ran got this one last read first.
        return needs_human(
            State.RESULT_TIMED_OUT,
            "result deadline passed (after one last status read); polling stopped",
            Evidence(EvidenceKind.RESULT_DEADLINE),
            "The result deadline passed before the provider finished. The remote job may "
            "still be running.",
            exchanges=decision.exchanges,
        )
    return decision


def decide_status(
    ctx: AppContext, profile: Profile, op: Operation, res: CallResult, *, cancelling: bool
) -> Decision:
    """Classify a status read while observing or cancelling."""
    ex = exchanges_of(res)
    now = ctx.now()
    if res.unreadable is not None and 200 <= (res.exchange.status_code or 0) < 300:
        # The same answer would be read again and again: a fact about the provider, not
        # a failure of this step to retry (the answer is kept in the history).
        return needs_human(
            State.CONTRACT_VIOLATION,
            f"status answer unreadable: {res.unreadable}",
            Evidence(EvidenceKind.UNREADABLE_ANSWER, {"why": res.unreadable}),
            f"The provider answered the status of job {op.remote_job_id} with what no "
            f"reader can keep ({res.unreadable}). Automation stopped; a human must read "
            "the job's state at the provider and resolve the operation.",
            details={"remote_job_id": op.remote_job_id, "why": res.unreadable},
            exchanges=ex,
        )
    if res.outcome == Outcome.OK and res.remote_class is not None:
        fields = {**remote_fields(res), **read_failures.cleared(op)}
        cls = res.remote_class
        if cls in SUCCESS:
            cause = "remote job finished" + (" after the cancel request" if cancelling else "")
            return Decision(
                State.RESULT_COLLECTING,
                cause,
                Evidence(EvidenceKind.REMOTE_SUCCESS),
                {**fields, "poll_attempt": 0},
                exchanges=ex,
                again=True,
                # Written with the collected result: a crash before finds the job running
                # and reads its status again, unless the result may be fetched only once.
                defer=profile.result is None or profile.result.safe_to_repeat,
                carry=res,
                observation=observation_of(res, now, None),
            )
        if cls == RemoteClass.FAILED and _failure_to_collect(profile, res):
            # The job failed with items counted: their documents hold the failed items
            # (and any partial output); the result step ends it `failed` with them.
            counts = res.counts
            assert counts is not None  # the table collects only with counts
            return Decision(
                State.RESULT_COLLECTING,
                "remote job failed with items counted; collecting its documents",
                Evidence(
                    EvidenceKind.REMOTE_ENDED_WITH_ITEMS,
                    {
                        "remote_class": cls.value,
                        "succeeded": counts.succeeded or 0,
                        "failed": counts.failed or 0,
                        "not_processed": counts.not_processed or 0,
                    },
                ),
                {**fields, "poll_attempt": 0},
                exchanges=ex,
                again=True,
                carry=res,
                observation=observation_of(res, now, None),
            )
        if cls == RemoteClass.FAILED:
            return Decision(
                State.FAILED,
                "remote job failed",
                Evidence(EvidenceKind.REMOTE_FAILED),
                {**fields, "error": provider_error(res, "remote_failed")},
                exchanges=ex,
                observation=observation_of(res, now, None),
            )
        if cls == RemoteClass.CANCELLED:
            return Decision(
                State.CANCELLED,
                "provider reports the job cancelled",
                Evidence(EvidenceKind.REMOTE_CANCELLED),
                fields,
                exchanges=ex,
                observation=observation_of(res, now, None),
            )
        delay = delay_for(ctx, profile, op, res)
        return Decision(
            None,
            "remote job still running",
            fields={**fields, "poll_attempt": op.poll_attempt + 1},
            delay=delay,
            exchanges=ex,
            observation=observation_of(res, now, delay),
        )
    failing, n = read_failures.counted(ctx, op, res, "status")
    if read_failures.enough(ctx, n):  # refused the same way again and again: a person
        return read_failures.status_to_person(op, res, failing, ex)
    delay = delay_for(ctx, profile, op, res)
    return Decision(
        None,
        f"status read gave no answer ({res.outcome.value})",
        fields={"poll_attempt": op.poll_attempt + 1, **failing},
        delay=delay,
        exchanges=ex,
        observation=observation_of(res, now, delay),
    )


def _failure_to_collect(profile: Profile, res: CallResult) -> bool:
    """A failed job whose items the table says to collect, and that has something to
    collect: result documents, or (a result inline in the status) a result in this answer.
    A failed long-running operation with counts but no response ends `failed` at once."""
    if not outcome(RemoteClass.FAILED, res.counts).collect:
        return False
    return profile.result is not None or res.result is not None


async def step_cancel_requested(
    ctx: AppContext, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    if profile.cancel is None:
        return Decision(
            State.CANCELLING,
            "provider has no cancel endpoint; watching for the end",
            Evidence(EvidenceKind.NO_CANCEL_ENDPOINT),
            delay=first_delay(ctx, profile),
        )
    res = await ctx.client.cancel(
        profile,
        op.remote_job_id or "",
        trace_id=op.trace_id,
        reason=op.cancel_reason,
        worker=worker_tag(ctx, op),
        cancel_url=op.remote_cancel_url,
        input=op.input,
        kind=op.kind,
    )
    if res.outcome in (Outcome.AMBIGUOUS, Outcome.RATE_LIMITED) and profile.cancel.idempotent:
        return Decision(
            None,
            "cancel not confirmed as sent; will send again (idempotent)",
            fields={"poll_attempt": op.poll_attempt + 1},
            delay=delay_for(ctx, profile, op, res),
            exchanges=exchanges_of(res),
        )
    return Decision(
        State.CANCELLING,
        f"cancel sent ({res.outcome.value})",
        Evidence(EvidenceKind.CANCEL_SENT, {"outcome": res.outcome.value}),
        {"poll_attempt": 0},
        delay=first_delay(ctx, profile),
        exchanges=exchanges_of(res),
    )


async def step_cancelling(
    ctx: AppContext, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    decision = await _read_status(ctx, profile, op, cancelling=True)
    if decision.to is None and deadline_passed(op.cancel_deadline_at, ctx.now()):
        return needs_human(
            State.CANCELLATION_UNCONFIRMED,
            "cancel deadline passed with no terminal remote state (after one last status read)",
            Evidence(EvidenceKind.CANCEL_DEADLINE),
            "The provider never confirmed the cancellation; the remote job may still run.",
            details={
                "remote_job_id": op.remote_job_id,
                "trace_id": op.trace_id,
                "provider": op.provider,
            },
            exchanges=decision.exchanges,
        )
    return decision
