"""The step of a create held for approval (docs/policy.md): nothing is ever sent here.

An observer claims an `awaiting_approval` operation only when it falls due: at its
approval deadline (it ends `failed`, never sent) or after a cancel intent (it ends
`cancelled`, never sent). Approval and denial are an operator's writes
(app/operations/services/approvals.py), never a step.
"""

from __future__ import annotations

from datetime import datetime

from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import Evidence, EvidenceKind, State
from app.operations.driver.decision import Decision
from app.policy.counters import APPROVALS
from app.providers.calls.types import CallResult
from app.providers.language.profile import Profile


def approval_deadline(op: Operation) -> datetime | None:
    gate = op.gate if isinstance(op.gate, dict) else {}
    raw = gate.get("deadline_at")
    return datetime.fromisoformat(str(raw).replace("Z", "+00:00")) if raw else None


async def step_awaiting_approval(
    ctx: AppContext, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    now = ctx.now()
    gate = dict(op.gate) if isinstance(op.gate, dict) else {}
    if op.cancel_requested_at is not None:
        gate.update(decision="cancelled", at=now.isoformat())
        return Decision(
            State.CANCELLED,
            "cancelled while awaiting approval; nothing was sent to the provider",
            Evidence(EvidenceKind.CANCELLED_BEFORE_SEND),
            {"cost": 0.0, "gate": gate},
        )
    deadline = approval_deadline(op)
    if deadline is None or now >= deadline:
        APPROVALS.labels(str(gate.get("rule")), "expired").inc()
        gate.update(decision="expired", at=now.isoformat())
        return Decision(
            State.FAILED,
            "approval deadline passed without a decision; nothing was sent to the provider",
            Evidence(EvidenceKind.APPROVAL_EXPIRED),
            {
                "cost": 0.0,
                "gate": gate,
                "error": {
                    "code": "approval_expired",
                    "message": f"its time to be cleared ran out at {gate.get('deadline_at')} "
                    "and it EXPIRED; nothing was sent to the provider",
                    "details": {"rule": gate.get("rule")},
                },
            },
        )
    return Decision(
        None,
        "awaiting approval",
        delay=(deadline - now).total_seconds(),
    )
