"""Cancel intents: recorded by the request, carried out only by the lease owner.

The request never changes the state itself: it records who asked, why and by when
the cancel must be confirmed, and makes the operation due now. The lease owner
then moves it to `cancel_requested`, sends the provider cancel once, and watches
for a terminal remote state. Sending a cancel is never reported as cancelled.
"""

from __future__ import annotations

from datetime import timedelta

from app.auth import deps
from app.core.http.errors import Conflict
from app.operations import ledger
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.contract.presenter import agent_status
from app.operations.contract.schemas import MAX_CANCEL_REASON
from app.operations.domain.operation import Operation
from app.operations.domain.states import NEEDS_ATTENTION, TERMINAL, is_done
from app.operations.hold import wake_on_commit

MAX_REASON = MAX_CANCEL_REASON


async def request_cancel(
    ctx: AppContext, op: Operation, who: deps.Principal, reason: str
) -> Operation:
    """Record the intent (once); later calls are idempotent and change nothing.

    The history row names the caller by role: `operator:<name>` for an operator or
    admin (the HTML view, `jobgate ops`), else `agent:<name>`.
    """
    state = op.state
    if is_done(state):
        raise Conflict(
            "operation_done",
            f"The operation is already done ({agent_status(op)}); there is nothing to stop and "
            "nothing was sent to the provider.",
            {"state": op.state},
        )
    if op.cancel_requested_at is not None:
        return op
    now = ctx.now()
    profile = ctx.profiles[op.provider]
    seconds = op.cancel_seconds or ctx.settings.scaled(profile.deadlines.cancel_seconds)
    deadline = now + timedelta(seconds=seconds)
    done = [s.value for s in TERMINAL | NEEDS_ATTENTION]
    async with ctx.db.transaction() as txn:
        applied = await repo.record_cancel_intent(
            txn,
            op.id,
            now=now,
            by=who.name,
            reason=reason[:MAX_REASON],
            deadline=deadline,
            done_states=done,
        )
        if applied:
            # Due now, unless a lease holder is mid-step: it sees the intent on its next step
            # (at once if this process holds it between two polls).
            await repo.make_due_now(txn, op.id, now=now, reason="cancel requested")
            wake_on_commit(txn, ctx.holder, op.id)
            await ledger.record(
                txn,
                op,
                kind="intent",
                actor=f"{'operator' if who.is_operator else 'agent'}:{who.name}",
                cause="cancel requested; not yet sent to the provider",
                now=now,
                data={
                    "reason": reason[:MAX_REASON],
                    "by": who.name,
                    "cancel_deadline_at": deadline.isoformat(),
                    "expected_effect": "the lease owner sends one provider cancel and "
                    "waits for a terminal remote state",
                },
            )
        fresh = await repo.get(txn, op.id)
    ctx.notifier.kick()
    if not applied and fresh is not None and is_done(fresh.state):
        raise Conflict(
            "operation_done",
            f"The operation finished ({agent_status(fresh)}) before the request to stop it was "
            "recorded.",
            {"state": fresh.state},
        )
    return fresh or op
