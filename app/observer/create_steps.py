"""Steps that learn the remote job: create, and reconciliation after an ambiguous create.

Intent before effect: these run only for a committed operation under its lease, and
every create (first or replayed) carries the same stored idempotency token.
"""

from __future__ import annotations

from app.observer.context import Engine
from app.observer.decision import Decision, needs_human
from app.observer.request_build import build_failure
from app.observer.step_common import (
    SUCCESS,
    deadline_passed,
    delay_for,
    first_delay,
    provider_error,
    remote_fields,
    worker_tag,
)
from app.operations.models import Operation
from app.operations.states import Evidence, State
from app.providers.profile import Profile
from app.providers.types import CallResult, Exchange, Outcome

INTAKE_LEASE_TOKEN = 1  # the lease the create request takes; a higher token means it died


async def step_create_pending(
    engine: Engine, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    now = engine.now()
    if deadline_passed(op.create_deadline_at, now):
        return Decision(
            State.CREATE_UNKNOWN,
            "create deadline passed before a confirmed create",
            Evidence("create_deadline"),
            again=True,
        )
    if op.lease_token > INTAKE_LEASE_TOKEN:
        # The create request that held the first lease died: it may have sent the
        # create. A fresh create answered 202 would prove nothing about a first job,
        # so this goes through reconciliation (replay AND lookup), never a blind send.
        return Decision(
            State.CREATE_UNKNOWN,
            "resumed after the create request died; the create may already have been sent",
            Evidence("ambiguous_create"),
            again=True,
        )
    res = await send_create(engine, profile, op)
    return decide_create(engine, profile, op, res, reconciling=False)


async def send_create(engine: Engine, profile: Profile, op: Operation) -> CallResult:
    """The create, first or replayed: always the stored token and the operation id."""
    return await engine.client.create(
        profile,
        op.kind,
        op.input,
        token=op.provider_token,
        client_reference=op.id,
        trace_id=op.trace_id,
        worker=worker_tag(engine, op),
    )


def decide_create(
    engine: Engine, profile: Profile, op: Operation, res: CallResult, *, reconciling: bool
) -> Decision:
    """Classify a create (or a create replay during reconciliation)."""
    if (unbuildable := build_failure(res)) is not None:
        return unbuildable
    ex = [res.exchange]
    if res.outcome == Outcome.OK and (res.remote_job_id or res.result is not None):
        fields = {"remote_job_id": res.remote_job_id, **remote_fields(res), "poll_attempt": 0}
        if res.remote_class in SUCCESS:
            return Decision(
                State.RESULT_COLLECTING,
                "provider answered the create with a result",
                Evidence("remote_success"),
                fields,
                exchanges=ex,
                again=True,
                carry=res,
            )
        return Decision(
            State.ACCEPTED,
            "provider accepted the job",
            Evidence("remote_job_id", {"remote_job_id": res.remote_job_id}),
            fields,
            delay=first_delay(engine, profile),
            exchanges=ex,
        )
    if res.outcome in (Outcome.REJECTED, Outcome.NOT_FOUND) and not reconciling:
        return Decision(
            State.FAILED,
            "provider definitively rejected the create",
            Evidence("create_rejected"),
            {"error": provider_error(res, "rejected")},
            exchanges=ex,
        )
    return _try_again_later(
        engine, profile, op, res, f"create outcome ambiguous ({res.outcome.value})", ex
    )


async def step_create_unknown(
    engine: Engine, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    if deadline_passed(op.create_deadline_at, engine.now()):
        return needs_human(
            State.CREATE_UNCONFIRMED,
            "create deadline passed; whether a remote job exists is unknown",
            Evidence("create_deadline"),
            "The create was never confirmed before its deadline; a remote job may exist. "
            "A human must check before anyone retries.",
        )
    return Decision(
        State.RECONCILING,
        "finding the remote job by the stored token",
        Evidence("reconcile"),
        again=True,
    )


async def step_reconciling(
    engine: Engine, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    replay = await send_create(engine, profile, op)
    found: CallResult | None = None
    if profile.lookup is not None:
        found = await engine.client.lookup(
            profile,
            token=op.provider_token,
            client_reference=op.id,
            trace_id=op.trace_id,
            worker=worker_tag(engine, op),
        )
    ex = [replay.exchange] + ([found.exchange] if found else [])
    listed = found.job_ids if found is not None and found.outcome == Outcome.OK else None
    replay_id = replay.remote_job_id if replay.outcome == Outcome.OK else None
    if profile.lookup is not None and listed is None:
        # The lookup is the check that no other job exists for this token; without
        # its answer a replayed 202 is not enough. Try again (the replay is idempotent).
        return _unresolved(engine, profile, op, replay, ex, replay_id, "the lookup failed")
    ids = set(listed or []) | ({replay_id} if replay_id else set())
    if len(ids) > 1:
        return needs_human(
            State.CONTRACT_VIOLATION,
            "provider reported different job ids for one idempotency token",
            Evidence("conflicting_job_ids", {"job_ids": sorted(ids)}),
            f"The provider returned different job ids for the same idempotency token: "
            f"{sorted(ids)}. Automation stopped; a human must pick the true job.",
            details={"job_ids": sorted(ids)},
            exchanges=ex,
        )
    if replay_id or listed:
        # Reconciling may only lead to `accepted`: even a finished job is observed
        # (and its result collected) through the normal path.
        job_id = replay_id or (listed or [""])[0]
        how = "create replay" if replay_id else "lookup"
        fields = {"remote_job_id": job_id, "poll_attempt": 0}
        if replay_id:
            fields.update(remote_fields(replay))
        return Decision(
            State.ACCEPTED,
            f"{how} found the remote job for the token",
            Evidence("remote_job_id", {"remote_job_id": job_id}),
            fields,
            delay=0.0,
            exchanges=ex,
        )
    if replay.outcome == Outcome.REJECTED and (listed == [] or profile.lookup is None):
        return Decision(
            State.FAILED,
            "provider rejected the create and holds no job for it",
            Evidence("no_remote_job"),
            {"error": provider_error(replay, "rejected")},
            exchanges=ex,
        )
    return _unresolved(engine, profile, op, replay, ex, None, "no answer names a job")


def _unresolved(
    engine: Engine,
    profile: Profile,
    op: Operation,
    replay: CallResult,
    ex: list[Exchange],
    seen_job: str | None,
    why: str,
) -> Decision:
    """Still ambiguous: reconcile again later, or hand over at the create deadline."""
    if deadline_passed(op.create_deadline_at, engine.now()):
        return needs_human(
            State.CREATE_UNCONFIRMED,
            f"create deadline passed while reconciling ({why})",
            Evidence("create_deadline"),
            "Could not confirm which provider job (if any) belongs to this operation before "
            "the create deadline.",
            details={"job_ids": [seen_job]} if seen_job else None,
            exchanges=ex,
        )
    return _try_again_later(
        engine, profile, op, replay, f"still ambiguous ({why}); will reconcile again", ex
    )


def _try_again_later(
    engine: Engine,
    profile: Profile,
    op: Operation,
    res: CallResult,
    cause: str,
    ex: list[Exchange],
) -> Decision:
    """Back to create_unknown; the next reconciliation waits out the backoff (or Retry-After)."""
    return Decision(
        State.CREATE_UNKNOWN,
        cause,
        Evidence("ambiguous_create"),
        {"poll_attempt": op.poll_attempt + 1},
        delay=delay_for(engine, profile, op, res),
        exchanges=ex,
    )
