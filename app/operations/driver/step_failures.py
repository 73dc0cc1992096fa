"""Exceptions in an operation's steps: counted, recorded, and `stalled` after too many in a row.

A step that raises is the gateway's own failure, not the provider's answer: it is
never silent. Each one is a `step_failed` history row (exception class, a short
summary, where it was raised; no secrets, no bodies) and bumps the operation's
`step_failures`. At `max_step_failures` in a row the operation goes to `stalled`,
a needs-attention state, with that summary in `error`, instead of being retried
forever. Any step that applies resets the count.
"""

from __future__ import annotations

import logging
import traceback
from pathlib import Path
from typing import Any

from app.core.text import degrade
from app.operations import ledger
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import Evidence, EvidenceKind, State, TransitionRefused
from app.operations.repository import Fence
from app.providers.calls.http_util import scrub, secret_variants

log = logging.getLogger(__name__)

MESSAGE_CHARS = 200  # the exception's message, first line only, cut to this
APP_ROOT = Path(__file__).resolve().parents[2]  # app/: frames are shown from there


def summarize(exc: BaseException, variants: list[str]) -> dict[str, str | None]:
    """Class, the first line of the message (secrets scrubbed) and the innermost frame."""
    message = str(exc).splitlines()[0] if str(exc) else ""
    message = scrub(degrade(message).replace("\x00", ""), variants)[:MESSAGE_CHARS]
    frames = traceback.extract_tb(exc.__traceback__)
    where = None
    if frames:
        last = frames[-1]
        path = Path(last.filename)
        shown = path.relative_to(APP_ROOT.parent) if path.is_relative_to(APP_ROOT) else path.name
        where = f"{shown}:{last.lineno} in {last.name}"
    return {"exception": type(exc).__name__, "message": message, "where": where}


def reset(op: Operation) -> dict[str, Any]:
    """Fields for a step that applied: the failures were not in a row after all."""
    return {"step_failures": 0} if op.step_failures else {}


def _variants(ctx: AppContext, op: Operation) -> list[str]:
    """The secrets a message might echo: the provider's credential and webhook secret."""
    profile = ctx.profiles.get(op.provider)
    if profile is None:
        return []
    found: list[str] = []
    try:
        credential = profile.resolve_credential(ctx.env)
        if credential is not None:
            found.append(credential.secret.reveal())
        webhook = profile.resolve_webhook_secret(ctx.env)
        if webhook is not None:
            found.append(webhook.reveal())
    except Exception:  # a broken credential reference must not hide the failure itself
        log.debug("no secrets to scrub for %s", op.provider, exc_info=True)
    return secret_variants(found)


async def record(
    ctx: AppContext, op: Operation, fence: Fence, exc: BaseException, *, retry: dict[str, Any]
) -> None:
    """Count and record one failure; stall the operation at the limit, else retry later.

    The row is read again first: the failure may have happened half-way through
    applying a decision, leaving the in-memory snapshot ahead of the database.
    """
    summary = summarize(exc, _variants(ctx, op))
    # The summary, not the traceback: an exception's text may echo a credential.
    log.error("step failed for %s in %s: %s", op.id, op.state, summary)
    limit = ctx.settings.max_step_failures
    now = ctx.now()
    actor = f"observer:{ctx.worker_id}"
    async with ctx.db.transaction() as txn:
        fresh = await repo.get(txn, op.id)
        if fresh is None:
            return
        count = fresh.step_failures + 1
        await ledger.record(
            txn,
            fresh,
            kind="step_failed",
            actor=actor,
            cause=f"step raised {summary['exception']} ({count} in a row; stalls at {limit})",
            now=now,
            data={**summary, "consecutive": count, "limit": limit},
        )
        if count >= limit and await _stall(ctx, txn, fresh, fence, summary, count, actor, now):
            return
        await repo.fenced_update(
            txn, op.id, fence=fence, at=now, fields={"step_failures": count, **retry}
        )


async def _stall(
    ctx: AppContext,
    txn: Any,
    op: Operation,
    fence: Fence,
    summary: dict[str, str | None],
    count: int,
    actor: str,
    now: Any,
) -> bool:
    error = {
        "code": "stalled",
        "message": (
            f"The gateway failed {count} times in a row to move this operation forward "
            f"(last: {summary['exception']}: {summary['message']}); automation stopped. "
            "A human must look at it and resolve it."
        ),
        "details": {**summary, "failures": count, "state": op.state},
    }
    fields = {
        "step_failures": count,
        "error": error,
        "lease_owner": None,
        "lease_expires_at": None,
        "next_poll_at": None,
        "next_poll_reason": None,
    }
    evidence = Evidence(EvidenceKind.STEP_FAILURES, {"failures": count, "last": summary})
    try:
        return await ledger.transition(
            ctx,
            txn,
            op,
            State.STALLED,
            evidence=evidence,
            actor=actor,
            cause=f"{count} step failures in a row; automation stopped",
            now=now,
            fence=fence,
            fields=fields,
        )
    except TransitionRefused as err:
        await ledger.record_refusal(txn, op, err, actor=actor, now=now)
        return False
