"""Helpers shared by the observer steps: scheduling, extraction, deadlines."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.providers.answers import bounds
from app.providers.answers.backoff import next_poll_delay
from app.providers.calls.types import CallResult, Exchange, LookupResult
from app.providers.language.profile import Profile
from app.providers.language.words import RemoteClass

SUCCESS = (RemoteClass.SUCCEEDED, RemoteClass.SUCCEEDED_PARTIAL)


def worker_tag(ctx: AppContext, op: Operation) -> str:
    """Sent as X-Jobgate-Worker: which observer, under which lease, made a call."""
    return f"{ctx.worker_id}#lease{op.lease_token}"


async def read_status(ctx: AppContext, profile: Profile, op: Operation) -> CallResult:
    """One status read of the operation's remote job, at the URL the provider named."""
    return await ctx.client.status(
        profile,
        op.remote_job_id or "",
        trace_id=op.trace_id,
        worker=worker_tag(ctx, op),
        status_url=op.remote_status_url,
        input=op.input,
        kind=op.kind,
    )


async def read_result(
    ctx: AppContext, profile: Profile, op: Operation, status: CallResult | None
) -> CallResult:
    """The remote job's result documents; `status` is a status answer already in hand."""
    return await ctx.client.result(
        profile,
        op.remote_job_id or "",
        trace_id=op.trace_id,
        worker=worker_tag(ctx, op),
        status_url=op.remote_status_url,
        status=status,
        input=op.input,
        kind=op.kind,
    )


def exchanges_of(res: CallResult) -> list[Exchange]:
    """Every call behind one answer, in order: the calls made before it (a `prepare`
    upload, the status read before the documents, earlier documents), then its own."""
    return [*res.extra_exchanges, res.exchange]


def delay_for(
    ctx: AppContext, profile: Profile, op: Operation, res: CallResult | LookupResult | None
) -> float:
    """Retry-After and the provider's hint win (within bounds); else backoff with jitter."""
    return next_poll_delay(
        profile.polling,
        op.poll_attempt,
        ctx.rng,
        retry_after=res.retry_after_seconds if res else None,
        poll_hint=res.poll_hint_seconds if res else None,
        time_scale=ctx.settings.time_scale,
    )


def first_delay(ctx: AppContext, profile: Profile) -> float:
    return ctx.settings.scaled(profile.polling.initial_seconds)


def remote_fields(res: CallResult) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if res.remote_state is not None:
        out["remote_state"] = res.remote_state
    if res.remote_class is not None:
        out["remote_class"] = res.remote_class.value
    if res.progress is not None:
        out["progress_completed"] = res.progress.completed
        out["progress_total"] = res.progress.total
    return out


def provider_error(res: CallResult, fallback: str) -> dict[str, Any]:
    err = res.error if isinstance(res.error, dict) else {}
    # The error object was bounded where it entered; a code or message that is not a
    # string (an object) is bounded again once it is one.
    code = bounds.cut(str(err.get("code") or fallback), bounds.WORD_BYTES)
    message = bounds.cut(str(err.get("message") or _no_reason(res)), bounds.MESSAGE_BYTES)
    return {"code": code, "message": message, "details": {"source": "provider"}}


def _no_reason(res: CallResult) -> str:
    """The reason to give when the provider named none: the job's own status when a
    status answer (a 2xx: never itself the reason) carried one, else the HTTP refusal."""
    status = res.exchange.status_code
    if status is not None and 200 <= status < 300:
        if res.remote_state:
            return f"the provider reports the job as {str(res.remote_state).upper()}"
        return "the provider reports the job FAILED without giving a reason"
    return f"provider answered HTTP {status}"


def observation_of(res: CallResult, received: datetime, delay: float | None) -> dict[str, Any]:
    return {
        "remote_state": res.remote_state,
        "remote_class": res.remote_class.value if res.remote_class else None,
        "progress": (
            {"completed": res.progress.completed, "total": res.progress.total}
            if res.progress
            else None
        ),
        "outcome": res.outcome.value,
        "provider_time": res.remote_time,
        "received_at": received.isoformat(),
        "next_poll_in_seconds": delay,
    }


def deadline_passed(deadline: datetime | None, now: datetime) -> bool:
    return deadline is not None and now >= deadline
