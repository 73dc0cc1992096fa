"""One step per local state: call the provider (never inside a transaction), then decide.

Each function reads the operation snapshot and the provider's classified answer
and returns a `Decision`; the runner applies it. Deadlines are checked before
any call so an expired clock becomes a state, never a silent drop.
"""

from __future__ import annotations

from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import State
from app.operations.driver.approval_steps import step_awaiting_approval
from app.operations.driver.collect import collect_result
from app.operations.driver.create_steps import (
    step_create_pending,
    step_create_unknown,
    step_reconciling,
)
from app.operations.driver.decision import Decision
from app.operations.driver.watch_steps import (
    step_accepted,
    step_cancel_requested,
    step_cancelling,
    step_observing,
)
from app.providers.calls.types import CallResult


async def step(ctx: AppContext, op: Operation, carry: CallResult | None) -> Decision:
    """Dispatch on the state; the caller holds the lease."""
    profile = ctx.profiles[op.provider]
    handler = _STEPS[op.state]
    return await handler(ctx, profile, op, carry)


_STEPS = {
    State.AWAITING_APPROVAL: step_awaiting_approval,
    State.CREATE_PENDING: step_create_pending,
    State.CREATE_UNKNOWN: step_create_unknown,
    State.RECONCILING: step_reconciling,
    State.ACCEPTED: step_accepted,
    State.OBSERVING: step_observing,
    State.CANCEL_REQUESTED: step_cancel_requested,
    State.CANCELLING: step_cancelling,
    State.RESULT_COLLECTING: collect_result,
}
