"""Drives one operation under a lease: step, apply the decisions fenced, repeat or release.

Used by observer ticks and by the create request itself (which holds the first
lease), so there is exactly one mechanism that moves operations forward. A step's
decisions go to the database through `write.apply` only; a decision that may wait for
the next one (`Decision.defer`) is written with it, in one transaction.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from app.core.obs import logs
from app.core.runtime import faults
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import is_done
from app.operations.driver import lease, step_failures
from app.operations.driver.decision import Decision
from app.operations.driver.steps import step
from app.operations.driver.write import apply, quiet, retry_fields
from app.operations.hold import Holder
from app.operations.repository import Fence
from app.providers.calls.types import CallResult

log = logging.getLogger(__name__)

MAX_STEPS = 8  # steps one lease may chain (create -> collect -> succeeded is 3)


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
    deferred: list[Decision] = []  # decided, to be written with the next decision
    view = op  # what the next step sees: `op` with the deferred decisions made
    for _ in range(MAX_STEPS):
        if is_done(view.state):
            await _release_done(ctx, op, fence)
            return op
        if not await lease.ensure(ctx, op, fence):
            return op
        if view is not op:
            view.lease_expires_at = op.lease_expires_at
        try:
            decision = await lease.beating(ctx, op, fence, step(ctx, view, carry))
            if decision.again and decision.defer:
                deferred.append(decision)
                view = _made(view, decision)
                carry = decision.carry
                continue
            for state in _states(op, deferred):  # made, not recorded
                faults.maybe_crash(ctx.settings, f"before_apply_{state}")
            held = _holds(ctx, view, decision, hold)
            written = [op.state, *(d.to for d in deferred)]
            silent = not deferred and quiet(ctx, op, [decision])
            applied = await apply(ctx, op, fence, decision, held=held, before=deferred)
        except Exception as exc:  # counted, recorded, logged; `stalled` after too many in a row
            retry = retry_fields(ctx, "step raised; retrying later")
            await step_failures.record(ctx, op, fence, exc, retry=retry)
            return op
        if not applied:
            log.info("lost the lease or the row moved on %s; leaving it", op.id)
            return op
        if not silent:  # a quiet poll changed nothing anyone waits on
            done = is_done(op.state)  # a waiter here reads the end from a copy, not the database
            ctx.notifier.publish(
                op.id, done=done, snapshot=dataclasses.replace(op) if done else None
            )
        for state in [*written[1:], op.state]:
            faults.maybe_crash(ctx.settings, f"after_{state}")
        deferred, view = [], op
        if not decision.again:
            _hand_on(op, fence, hold, held)
            return op
        carry = decision.carry
    await _schedule_retry(ctx, op, fence, "step limit reached")
    return op


def _made(view: Operation, decision: Decision) -> Operation:
    """`view` as it will be once `decision` is written (for the next step to read)."""
    made = dataclasses.replace(view)
    for key, value in decision.fields.items():
        setattr(made, key, value)
    if decision.to is not None:
        made.state = decision.to
    return made


def _states(op: Operation, deferred: list[Decision]) -> list[Any]:
    """The states decisions were made in: the row's, then each deferred one's target."""
    return [op.state, *(d.to for d in deferred if d.to is not None)]


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


async def _schedule_retry(ctx: AppContext, op: Operation, fence: Fence, why: str) -> None:
    async with ctx.db.transaction() as txn:
        await repo.fenced_update(
            txn, op.id, fence=fence, at=ctx.now(), fields=retry_fields(ctx, why)
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
