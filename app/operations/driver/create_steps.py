"""Steps that learn the remote job: create, and reconciliation after an ambiguous create.

Intent before effect: these run only for a committed operation under its lease.
A create is sent only with a `SendPermit` (app.operations.driver.single_create): the first
send under the intake lease, another one after every earlier create was proven to make
no job (app.operations.driver.no_job), or a replay with the stored token to a provider
that honours it. Everything else is found by lookups (app.operations.driver.reconcile)
or handed to a human.
"""

from __future__ import annotations

from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import Evidence, EvidenceKind, State
from app.operations.driver.decision import Decision
from app.operations.driver.no_job import after_proof, gave_up
from app.operations.driver.reconcile import by_lookup, by_token, refused_resend, unconfirmed
from app.operations.driver.request_build import build_failure
from app.operations.driver.single_create import (
    Blind,
    LookupOnly,
    TokenHonoured,
    after_nothing_created,
    approved_send,
    capability,
    first_send,
    send_create,
)
from app.operations.driver.step_common import (
    SUCCESS,
    deadline_passed,
    delay_for,
    exchanges_of,
    first_delay,
    provider_error,
    remote_fields,
)
from app.operations.repository import CreateTally
from app.providers.calls.types import CallResult, Outcome
from app.providers.language.profile import Profile


async def step_create_pending(
    ctx: AppContext, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    past = deadline_passed(op.create_deadline_at, ctx.now())
    permit = None if past else first_send(op) or await approved_send(ctx, op)
    tally = CreateTally()
    if permit is None and op.version > 0:
        # An earlier create proved it made no job (create_pending -> create_pending).
        if past:
            async with ctx.db.read() as txn:
                tally = await repo.create_tally(txn, op.id)
            if tally.all_proven:
                return gave_up(op, tally)
        else:
            permit, tally = await after_nothing_created(ctx, op)
    if past:
        return Decision(
            State.CREATE_UNKNOWN,
            "create deadline passed before a confirmed create",
            Evidence(EvidenceKind.CREATE_DEADLINE),
            again=True,
        )
    if permit is None:
        # The process sending a create died (a claim bumped the lease token, or a create
        # was announced and never answered): it may have been sent. A fresh create
        # answered 202 would prove nothing about a first job, so this goes through
        # reconciliation, never a blind send.
        return Decision(
            State.CREATE_UNKNOWN,
            f"resumed after the {_sender(op, tally)} died; the create may already have been sent",
            Evidence(EvidenceKind.AMBIGUOUS_CREATE),
            again=True,
        )
    res = await send_create(ctx, profile, op, permit)
    return decide_create(ctx, profile, op, res, unsent_before=tally.unsent == tally.proven)


def _sender(op: Operation, tally: CreateTally) -> str:
    """Which send died, in words: the intake's first, the first after an operator's
    approval, or one sent again after every earlier create was proven to make no job."""
    if op.version == 0:
        return "create request"
    gate = op.gate if isinstance(op.gate, dict) else {}
    if tally.resends == 0 and gate.get("decision") == "approved" and gate.get("sent_at"):
        return "process sending the approved create (its first send)"
    return "process sending the create again"


def decide_create(
    ctx: AppContext,
    profile: Profile,
    op: Operation,
    res: CallResult,
    *,
    unsent_before: bool = True,
) -> Decision:
    """Classify a create's answer (`unsent_before`: no earlier create reached the provider)."""
    ex = exchanges_of(res)
    if res.no_job is not None:  # proven to have made no job: it may go again
        return after_proof(ctx, profile, op, res, res.no_job, ex, unsent_before=unsent_before)
    if (unbuildable := build_failure(res)) is not None:
        return unbuildable
    if res.outcome == Outcome.OK and (res.remote_job_id or res.result is not None):
        fields = {
            "remote_job_id": res.remote_job_id,
            "remote_status_url": res.status_url,
            "remote_cancel_url": res.cancel_url,
            **remote_fields(res),
            "poll_attempt": 0,
        }
        if res.remote_class in SUCCESS:
            return Decision(
                State.RESULT_COLLECTING,
                "provider answered the create with a result",
                Evidence(EvidenceKind.REMOTE_SUCCESS),
                fields,
                exchanges=ex,
                again=True,
                carry=res,
            )
        return Decision(
            State.ACCEPTED,
            "provider accepted the job",
            Evidence(EvidenceKind.REMOTE_JOB_ID, {"remote_job_id": res.remote_job_id}),
            fields,
            delay=first_delay(ctx, profile),
            exchanges=ex,
        )
    cap = capability(profile, op.single_create)
    refused = res.outcome in (Outcome.REJECTED, Outcome.NOT_FOUND)
    if refused or (res.outcome == Outcome.RATE_LIMITED and not isinstance(cap, TokenHonoured)):
        # A 429 starts nothing; only a provider that honours the token gets it again.
        error = provider_error(res, "rejected" if refused else "rate_limited")
        if not refused:
            error["message"] = (
                "The provider refused to start the job (rate limited); nothing was started. "
                "Start a new operation later."
            )
        return Decision(
            State.FAILED,
            "provider definitively rejected the create",
            Evidence(EvidenceKind.CREATE_REJECTED),
            {"error": error},
            exchanges=ex,
        )
    blind = isinstance(cap, Blind)  # nothing to reconcile with: on to a human at once
    return Decision(
        State.CREATE_UNKNOWN,
        f"create outcome ambiguous ({res.outcome.value})",
        Evidence(EvidenceKind.AMBIGUOUS_CREATE),
        {"poll_attempt": op.poll_attempt + 1},
        delay=None if blind else delay_for(ctx, profile, op, res),
        again=blind,
        exchanges=ex,
        carry=res if blind else None,
    )


async def step_create_unknown(
    ctx: AppContext, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    cap = capability(profile, op.single_create)
    past = deadline_passed(op.create_deadline_at, ctx.now())
    if isinstance(cap, Blind):
        why = _what_the_create_got(carry)
        return unconfirmed(ctx, profile, op, cap, why, notes=[refused_resend(op, cap)])
    if past and isinstance(cap, TokenHonoured) and cap.lookup is None:
        # Past the deadline only reads are allowed, and this profile has nothing to read.
        return unconfirmed(ctx, profile, op, cap, "create deadline passed")
    if past:
        how = "create deadline passed; one last read-only lookup before handing over"
    elif isinstance(cap, LookupOnly):
        how = "finding the remote job by its client reference (never by a resend)"
    else:
        how = "finding the remote job: lookup first, then a replay with the same token"
    return Decision(State.RECONCILING, how, Evidence(EvidenceKind.RECONCILE), again=True)


async def step_reconciling(
    ctx: AppContext, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    cap = capability(profile, op.single_create)
    if isinstance(cap, TokenHonoured):
        return await by_token(ctx, profile, op, cap)
    if isinstance(cap, LookupOnly):
        return await by_lookup(ctx, profile, op, cap)
    # The profile lost its lookup while this operation was reconciling.
    return unconfirmed(ctx, profile, op, cap, "no lookup left", notes=[refused_resend(op, cap)])


def _what_the_create_got(res: CallResult | None) -> str:
    """Why the create is in doubt, in words: its answer, or the process that died."""
    if res is None:
        return "the create request died after it may have sent the create"
    ex = res.exchange
    if ex.status_code is not None:
        return f"the create was answered HTTP {ex.status_code}"
    return f"the create got no answer: {ex.error or 'transport failure'}"
