"""One step per local state: call the provider (never inside a transaction), then decide.

Each function reads the operation snapshot and the provider's classified answer
and returns a `Decision`; the runner applies it. Deadlines are checked before
any call so an expired clock becomes a state, never a silent drop.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.observer.collect import collect_result
from app.observer.context import Engine
from app.observer.decision import Decision
from app.operations.models import Operation
from app.operations.states import Evidence, State
from app.providers.backoff import next_poll_delay
from app.providers.profile import Profile
from app.providers.types import CallResult, Outcome, RemoteClass

SUCCESS = (RemoteClass.SUCCEEDED, RemoteClass.SUCCEEDED_PARTIAL)


def delay_for(engine: Engine, profile: Profile, op: Operation, res: CallResult | None) -> float:
    """Retry-After and the provider's hint win (within bounds); else backoff with jitter."""
    return next_poll_delay(
        profile.polling,
        op.poll_attempt,
        engine.rng,
        retry_after=res.retry_after_seconds if res else None,
        poll_hint=res.poll_hint_seconds if res else None,
        time_scale=engine.settings.time_scale,
    )


def _first_delay(engine: Engine, profile: Profile) -> float:
    return profile.polling.initial_seconds * engine.settings.time_scale


def _remote_fields(res: CallResult) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if res.remote_state is not None:
        out["remote_state"] = res.remote_state
    if res.remote_class is not None:
        out["remote_class"] = res.remote_class.value
    if res.progress is not None:
        out["progress_completed"] = res.progress.completed
        out["progress_total"] = res.progress.total
    return out


def _provider_error(res: CallResult, fallback: str) -> dict[str, Any]:
    err = res.error if isinstance(res.error, dict) else {}
    code = str(err.get("code") or fallback)
    message = str(err.get("message") or f"provider answered HTTP {res.exchange.status_code}")
    return {"code": code, "message": message, "details": {"source": "provider"}}


def _observation(res: CallResult, received: datetime, delay: float | None) -> dict[str, Any]:
    return {
        "remote_state": res.remote_state,
        "remote_class": res.remote_class.value if res.remote_class else None,
        "progress": (
            {"completed": res.progress.completed, "total": res.progress.total}
            if res.progress
            else None
        ),
        "outcome": res.outcome.value,
        "received_at": received.isoformat(),
        "next_poll_in_seconds": delay,
    }


def _deadline_passed(deadline: datetime | None, now: datetime) -> bool:
    return deadline is not None and now >= deadline


async def step(engine: Engine, op: Operation, carry: CallResult | None) -> Decision:
    """Dispatch on the state; the caller holds the lease."""
    profile = engine.profiles[op.provider]
    state = State(op.state)
    handler = _STEPS[state]
    return await handler(engine, profile, op, carry)


async def _create_pending(
    engine: Engine, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    now = engine.now()
    if _deadline_passed(op.create_deadline_at, now):
        return Decision(
            State.CREATE_UNKNOWN,
            "create deadline passed before a confirmed create",
            Evidence("create_deadline"),
            again=True,
        )
    res = await engine.client.create(
        profile,
        op.kind,
        op.input,
        token=op.provider_token,
        client_reference=op.id,
        trace_id=op.trace_id,
        worker=engine.worker_id,
    )
    return decide_create(engine, profile, op, res, reconciling=False)


def decide_create(
    engine: Engine, profile: Profile, op: Operation, res: CallResult, *, reconciling: bool
) -> Decision:
    """Classify a create (or a create replay during reconciliation)."""
    ex = [res.exchange]
    if res.outcome == Outcome.OK and (res.remote_job_id or res.result is not None):
        fields = {"remote_job_id": res.remote_job_id, **_remote_fields(res), "poll_attempt": 0}
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
            delay=_first_delay(engine, profile),
            exchanges=ex,
        )
    if res.outcome in (Outcome.REJECTED, Outcome.NOT_FOUND) and not reconciling:
        return Decision(
            State.FAILED,
            "provider definitively rejected the create",
            Evidence("create_rejected"),
            {"error": _provider_error(res, "rejected")},
            exchanges=ex,
        )
    return Decision(
        State.CREATE_UNKNOWN,
        f"create outcome ambiguous ({res.outcome.value})",
        Evidence("ambiguous_create"),
        {"poll_attempt": op.poll_attempt + 1},
        delay=delay_for(engine, profile, op, res),
        exchanges=ex,
    )


async def _create_unknown(
    engine: Engine, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    if _deadline_passed(op.create_deadline_at, engine.now()):
        return Decision(
            State.CREATE_UNCONFIRMED,
            "create deadline passed; whether a remote job exists is unknown",
            Evidence("create_deadline"),
            {
                "error": {
                    "code": "create_unconfirmed",
                    "message": "The create was never confirmed before its "
                    "deadline; a remote job may exist. A human must check "
                    "before anyone retries.",
                }
            },
        )
    return Decision(
        State.RECONCILING,
        "finding the remote job by the stored token",
        Evidence("reconcile"),
        again=True,
    )


async def _reconciling(
    engine: Engine, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    replay = await engine.client.create(
        profile,
        op.kind,
        op.input,
        token=op.provider_token,
        client_reference=op.id,
        trace_id=op.trace_id,
        worker=engine.worker_id,
    )
    found: CallResult | None = None
    if profile.lookup is not None:
        found = await engine.client.lookup(
            profile,
            token=op.provider_token,
            client_reference=op.id,
            trace_id=op.trace_id,
            worker=engine.worker_id,
        )
    ex = [replay.exchange] + ([found.exchange] if found else [])
    listed = found.job_ids if found is not None and found.outcome == Outcome.OK else None
    replay_id = replay.remote_job_id if replay.outcome == Outcome.OK else None
    ids = set(listed or []) | ({replay_id} if replay_id else set())
    if len(ids) > 1:
        return Decision(
            State.CONTRACT_VIOLATION,
            "provider reported different job ids for one idempotency token",
            Evidence("conflicting_job_ids", {"job_ids": sorted(ids)}),
            {
                "error": {
                    "code": "contract_violation",
                    "message": "The provider returned different job ids for the "
                    f"same idempotency token: {sorted(ids)}. Automation stopped; "
                    "a human must pick the true job.",
                    "details": {"job_ids": sorted(ids)},
                }
            },
            exchanges=ex,
        )
    if replay_id or listed:
        # Reconciling may only lead to `accepted`: even a finished job is observed
        # (and its result collected) through the normal path.
        job_id = replay_id or (listed or [""])[0]
        how = "create replay" if replay_id else "lookup"
        fields = {"remote_job_id": job_id, "poll_attempt": 0}
        if replay_id:
            fields.update(_remote_fields(replay))
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
            {"error": _provider_error(replay, "rejected")},
            exchanges=ex,
        )
    if _deadline_passed(op.create_deadline_at, engine.now()):
        return Decision(
            State.CREATE_UNCONFIRMED,
            "create deadline passed while reconciling",
            Evidence("create_deadline"),
            {
                "error": {
                    "code": "create_unconfirmed",
                    "message": "Could not learn whether the provider started the "
                    "job before the create deadline.",
                }
            },
            exchanges=ex,
        )
    return Decision(
        State.CREATE_UNKNOWN,
        "still ambiguous; will reconcile again",
        Evidence("ambiguous_create"),
        {"poll_attempt": op.poll_attempt + 1},
        delay=delay_for(engine, profile, op, replay),
        exchanges=ex,
    )


async def _accepted(
    engine: Engine, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    if op.cancel_requested_at is not None:
        return _to_cancel_requested(op)
    return Decision(
        State.OBSERVING,
        "lease owner started polling",
        Evidence("lease_owner"),
        {"poll_attempt": 0},
        again=True,
    )


def _to_cancel_requested(op: Operation) -> Decision:
    return Decision(
        State.CANCEL_REQUESTED,
        "cancel intent recorded earlier is now applied",
        Evidence("cancel_intent", {"by": op.cancel_requested_by}),
        again=True,
    )


async def _observing(
    engine: Engine, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    if op.cancel_requested_at is not None:
        return _to_cancel_requested(op)
    now = engine.now()
    if _deadline_passed(op.result_deadline_at, now):
        return Decision(
            State.RESULT_TIMED_OUT,
            "result deadline passed; polling stopped",
            Evidence("result_deadline"),
            {
                "error": {
                    "code": "result_timed_out",
                    "message": "The result deadline passed before the provider "
                    "finished. The remote job may still be running.",
                }
            },
        )
    res = await engine.client.status(
        profile, op.remote_job_id or "", trace_id=op.trace_id, worker=engine.worker_id
    )
    return decide_status(engine, profile, op, res, cancelling=False)


def decide_status(
    engine: Engine, profile: Profile, op: Operation, res: CallResult, *, cancelling: bool
) -> Decision:
    """Classify a status read while observing or cancelling."""
    ex = [res.exchange]
    now = engine.now()
    if res.outcome == Outcome.OK and res.remote_class is not None:
        fields = _remote_fields(res)
        cls = res.remote_class
        if cls in SUCCESS:
            cause = "remote job finished" + (" after the cancel request" if cancelling else "")
            return Decision(
                State.RESULT_COLLECTING,
                cause,
                Evidence("remote_success"),
                {**fields, "poll_attempt": 0},
                exchanges=ex,
                again=True,
                carry=res,
                observation=_observation(res, now, None),
            )
        if cls == RemoteClass.FAILED:
            return Decision(
                State.FAILED,
                "remote job failed",
                Evidence("remote_failed"),
                {**fields, "error": _provider_error(res, "remote_failed")},
                exchanges=ex,
                observation=_observation(res, now, None),
            )
        if cls == RemoteClass.CANCELLED:
            return Decision(
                State.CANCELLED,
                "provider reports the job cancelled",
                Evidence("remote_cancelled"),
                fields,
                exchanges=ex,
                observation=_observation(res, now, None),
            )
        delay = delay_for(engine, profile, op, res)
        return Decision(
            None,
            "remote job still running",
            fields={**fields, "poll_attempt": op.poll_attempt + 1},
            delay=delay,
            exchanges=ex,
            observation=_observation(res, now, delay),
        )
    delay = delay_for(engine, profile, op, res)
    return Decision(
        None,
        f"status read gave no answer ({res.outcome.value})",
        fields={"poll_attempt": op.poll_attempt + 1},
        delay=delay,
        exchanges=ex,
        observation=_observation(res, now, delay),
    )


async def _cancel_requested(
    engine: Engine, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    if profile.cancel is None:
        return Decision(
            State.CANCELLING,
            "provider has no cancel endpoint; watching for the end",
            Evidence("cancel_sent", {"sent": False}),
            delay=_first_delay(engine, profile),
        )
    res = await engine.client.cancel(
        profile,
        op.remote_job_id or "",
        trace_id=op.trace_id,
        reason=op.cancel_reason,
        worker=engine.worker_id,
    )
    if res.outcome in (Outcome.AMBIGUOUS, Outcome.RATE_LIMITED) and profile.cancel.idempotent:
        return Decision(
            None,
            "cancel not confirmed as sent; will send again (idempotent)",
            fields={"poll_attempt": op.poll_attempt + 1},
            delay=delay_for(engine, profile, op, res),
            exchanges=[res.exchange],
        )
    return Decision(
        State.CANCELLING,
        f"cancel sent ({res.outcome.value})",
        Evidence("cancel_sent", {"outcome": res.outcome.value}),
        {"poll_attempt": 0},
        delay=_first_delay(engine, profile),
        exchanges=[res.exchange],
    )


async def _cancelling(
    engine: Engine, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    if _deadline_passed(op.cancel_deadline_at, engine.now()):
        return Decision(
            State.CANCELLATION_UNCONFIRMED,
            "cancel deadline passed with no terminal remote state",
            Evidence("cancel_deadline"),
            {
                "error": {
                    "code": "cancellation_unconfirmed",
                    "message": "The provider never confirmed the cancellation; "
                    "the remote job may still run.",
                    "details": {
                        "remote_job_id": op.remote_job_id,
                        "trace_id": op.trace_id,
                        "provider": op.provider,
                    },
                }
            },
        )
    res = await engine.client.status(
        profile, op.remote_job_id or "", trace_id=op.trace_id, worker=engine.worker_id
    )
    return decide_status(engine, profile, op, res, cancelling=True)


_STEPS = {
    State.CREATE_PENDING: _create_pending,
    State.CREATE_UNKNOWN: _create_unknown,
    State.RECONCILING: _reconciling,
    State.ACCEPTED: _accepted,
    State.OBSERVING: _observing,
    State.CANCEL_REQUESTED: _cancel_requested,
    State.CANCELLING: _cancelling,
    State.RESULT_COLLECTING: collect_result,
}
