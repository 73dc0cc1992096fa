"""Drives one operation under a lease: step, apply the decision fenced, repeat or release.

Used by observer ticks and by the create request itself (which holds the first
lease), so there is exactly one mechanism that moves operations forward.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from app.core.db.write_faults import kind_of
from app.core.obs import logs, telemetry
from app.core.runtime import faults
from app.operations import ledger
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import Evidence, TransitionRefused, is_done
from app.operations.driver import lease, step_failures
from app.operations.driver.decision import Decision
from app.operations.driver.steps import step
from app.operations.hold import Holder
from app.operations.repository import Fence
from app.providers.calls.types import CallResult

log = logging.getLogger(__name__)

MAX_STEPS = 8  # steps one lease may chain (create -> collect -> succeeded is 3)
REFUSAL_RETRY_SECONDS = 60.0  # a refused transition is a bug: look again later, slowly
MAX_KEPT = 1000  # provider answers waiting for the database, per process (a few KB each)
FIRST_RETRY_SECONDS = 0.25  # a kept answer's next write; then doubled, at most:
MAX_RETRY_SECONDS = 5.0


async def process(
    ctx: AppContext, op: Operation, fence: Fence, hold: Holder | None = None
) -> Operation:
    """Move `op` forward until it must wait, is done, or the lease is lost.

    Given a `hold`, a next poll due soon stays under this lease, handed to the holder
    (app/operations/hold.py), instead of going back to the queue.
    """
    with logs.bind(op.id, op.trace_id):  # every line logged meanwhile names the operation
        return await _process(ctx, op, fence, hold)


async def _process(ctx: AppContext, op: Operation, fence: Fence, hold: Holder | None) -> Operation:
    carry: CallResult | None = None
    for _ in range(MAX_STEPS):
        if is_done(op.state):
            await _release_done(ctx, op, fence)
            return op
        if not await lease.ensure(ctx, op, fence):
            return op
        try:
            decision = await lease.beating(ctx, op, fence, step(ctx, op, carry))
            faults.maybe_crash(ctx.settings, f"before_apply_{op.state}")  # made, not recorded
            held = _holds(ctx, op, decision, hold)
            applied = await apply(ctx, op, fence, decision, held=held)
        except Exception as exc:  # counted, recorded, logged; `stalled` after too many in a row
            retry = _retry_fields(ctx, "step raised; retrying later")
            await step_failures.record(ctx, op, fence, exc, retry=retry)
            return op
        if not applied:
            log.info("lost the lease or the row moved on %s; leaving it", op.id)
            return op
        ctx.notifier.publish(op.id, done=is_done(op.state))
        faults.maybe_crash(ctx.settings, f"after_{op.state}")
        if not decision.again:
            _hand_on(op, fence, hold, held)
            return op
        carry = decision.carry
    await _schedule_retry(ctx, op, fence, "step limit reached")
    return op


def _holds(ctx: AppContext, op: Operation, decision: Decision, hold: Holder | None) -> bool:
    """Whether the next poll stays under this lease: soon, and the holder has room."""
    if hold is None or decision.again or is_done(decision.to or op.state):
        return False
    delay = decision.delay if decision.delay is not None else 0.0
    limit = min(ctx.settings.observer_hold_seconds, ctx.lease_seconds / 2)
    return delay <= limit and hold.accepts(delay)


def _hand_on(op: Operation, fence: Fence, hold: Holder | None, held: bool) -> None:
    """Tell the holder what became of the next poll: held by it, or back in the queue."""
    if hold is None or op.next_poll_at is None or is_done(op.state):
        return
    if held:
        hold.take(op, fence, op.next_poll_at)
    else:
        hold.released(op.next_poll_at)


def _schedule(
    ctx: AppContext, op: Operation, decision: Decision, *, held: bool = False
) -> dict[str, Any]:
    """Lease and next-poll fields written in the same statement as the decision.

    Held (`_holds`): the lease is renewed rather than released, so the row shows when
    the next poll is due and who will make it; if this process dies, the lease lapses
    and the operation is due to any observer.
    """
    new_state = decision.to or op.state
    if decision.again and not is_done(new_state):
        return {}
    now = ctx.now()
    if held:
        fields: dict[str, Any] = {"lease_expires_at": now + timedelta(seconds=ctx.lease_seconds)}
    else:
        fields = {"lease_owner": None, "lease_expires_at": None}
    if is_done(new_state):
        fields.update(next_poll_at=None, next_poll_reason=None)
    else:
        delay = decision.delay if decision.delay is not None else 0.0
        fields.update(
            next_poll_at=now + timedelta(seconds=delay),
            next_poll_reason=decision.cause[:200],
        )
    return fields


async def apply(
    ctx: AppContext, op: Operation, fence: Fence, decision: Decision, *, held: bool = False
) -> bool:
    """Write what a step decided: the one path every step's write takes.

    A decision that carries a provider's answer (its exchanges) is kept when the write
    fails because the database is away (or busy, or full): for a create that answer may
    be the job id of a job that now runs, which a provider without an idempotency token
    or a lookup could never tell again. The write is tried again, with backoff, while the
    lease holds (past it another observer may own the operation) and while fewer than
    `MAX_KEPT` answers wait in this process; then the failure is raised and the step
    counts as failed (docs/operations.md, "When storage or the database fails").
    """
    try:
        return await _write(ctx, op, fence, decision, held)
    except Exception as exc:
        if not decision.exchanges or kind_of(exc) is None or ctx.answers_waiting >= MAX_KEPT:
            raise
        first = exc
    ctx.answers_waiting += 1
    try:
        delay = FIRST_RETRY_SECONDS
        while True:
            left = lease.left(ctx, op)
            if left <= delay:
                log.error("the database stayed away past the lease of %s; answer dropped", op.id)
                raise first
            log.warning(
                "database away while writing a provider's answer for %s; kept, retrying in "
                "%.2f s (%.1f s of lease left)",
                op.id,
                delay,
                left,
                extra={"event": "answer_kept"},
            )
            await ctx.clock.sleep(delay)
            try:
                written = await _write(ctx, op, fence, decision, held)
            except Exception as exc:
                if kind_of(exc) is None:
                    raise
                delay = min(delay * 2, MAX_RETRY_SECONDS)
                continue
            log.info("kept answer for %s written", op.id, extra={"event": "answer_kept"})
            return written
    finally:
        ctx.answers_waiting -= 1


async def _write(
    ctx: AppContext, op: Operation, fence: Fence, decision: Decision, held: bool
) -> bool:
    """One transaction: exchanges, the transition or observation, the schedule.

    Exchanges are facts (the call was made) and are kept even when the write that
    follows is fenced off; the fenced write itself is recorded as such. The
    transaction's history rows go in one statement, after the guarded update.
    """
    now = ctx.now()
    from_state = op.state
    actor = f"observer:{ctx.worker_id}"
    schedule = _schedule(ctx, op, decision, held=held)
    fields = {**decision.fields, **schedule, **step_failures.reset(op)}
    facts = [
        ledger.row(
            op,
            kind="exchange",
            actor=actor,
            now=now,
            cause=f"{ex.operation} {ex.method} -> {ex.status_code}",
            data=ex.to_dict(),
        )
        for ex in decision.exchanges
    ]
    facts += [  # facts too, e.g. a refused resend
        ledger.row(op, kind=n.kind, actor=actor, now=now, cause=n.cause, data=n.data)
        for n in decision.notes
    ]
    async with ctx.db.transaction() as txn:
        if decision.to is None:
            applied = await _observe(txn, op, fence, decision, fields, actor, now, facts)
        else:
            try:
                applied = await ledger.transition(
                    ctx,
                    txn,
                    op,
                    decision.to,
                    evidence=decision.evidence or Evidence("missing"),  # refused: no proof
                    actor=actor,
                    cause=decision.cause,
                    now=now,
                    fence=fence,
                    fields=fields,
                    data={"observation": decision.observation} if decision.observation else None,
                    before=facts,
                )
            except TransitionRefused as err:
                await ledger.record_refusal(txn, op, err, actor=actor, now=now, before=facts)
                await repo.fenced_update(
                    txn,
                    op.id,
                    fence=fence,
                    at=now,
                    fields=_retry_fields(ctx, f"refused: {err.reason}"),
                )
                return False
            if applied and decision.failed_items:
                await repo.insert_result_items(txn, op.id, decision.failed_items)
        # Inside the transaction, its row lock held (a process frozen or killed here).
        faults.maybe_crash(ctx.settings, f"inside_apply_{from_state}")
        if not applied:
            telemetry.fenced(op.id, op.trace_id, decision.cause)
            fenced = ledger.row(
                op,
                kind="fenced",
                actor=actor,
                now=now,
                cause="write refused: lease lost or the operation moved on",
                data={"lease_token": fence.token, "wanted": decision.cause},
            )
            await ledger.write(txn, [*facts, fenced])
        return applied


async def _observe(
    txn: Any,
    op: Operation,
    fence: Fence,
    decision: Decision,
    fields: dict[str, Any],
    actor: str,
    now: Any,
    facts: list[repo.HistoryRow],
) -> bool:
    """No state change: the schedule and fields, then `facts` and the observation."""
    applied = await repo.fenced_update(
        txn, op.id, fence=fence, at=now, fields=fields, expect_state=op.state
    )
    if applied:
        if decision.observation is not None:
            observed = ledger.row(
                op,
                kind="observation",
                actor=actor,
                cause=decision.cause,
                now=now,
                data=decision.observation,
            )
            facts = [*facts, observed]
        await ledger.write(txn, facts)
        for key, value in fields.items():
            setattr(op, key, value)
        op.updated_at = now  # as written: a holder compares it with the row's (hold.py)
    return applied


def _retry_fields(ctx: AppContext, why: str) -> dict[str, Any]:
    delay = ctx.settings.scaled(REFUSAL_RETRY_SECONDS)
    return {
        "lease_owner": None,
        "lease_expires_at": None,
        "next_poll_at": ctx.now() + timedelta(seconds=delay),
        "next_poll_reason": why[:200],
    }


async def _schedule_retry(ctx: AppContext, op: Operation, fence: Fence, why: str) -> None:
    async with ctx.db.transaction() as txn:
        await repo.fenced_update(
            txn, op.id, fence=fence, at=ctx.now(), fields=_retry_fields(ctx, why)
        )


async def _release_done(ctx: AppContext, op: Operation, fence: Fence) -> None:
    async with ctx.db.transaction() as txn:
        await repo.fenced_update(
            txn,
            op.id,
            fence=fence,
            at=ctx.now(),
            fields={"lease_owner": None, "lease_expires_at": None, "next_poll_at": None},
        )
