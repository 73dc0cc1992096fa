"""An operator's approval or denial of a create the policy held (docs/policy.md).

Approve: the create goes on from `create_pending` as today, its deadlines counted from
the approval, and an observer sends it (`single_create.approved_send`). Deny: it ends
`failed`, never sent. Only an operator or admin decides, never the key that created
the operation (except in dev mode, where every caller is the one admin `dev`); each
decision is a history row, so also an audit entry, naming who and why.
"""

from __future__ import annotations

from typing import Any

from app.auth import deps
from app.core.http.errors import ApiError, Conflict
from app.operations import ledger
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import Evidence, EvidenceKind, State
from app.policy.counters import APPROVALS


def _check(ctx: AppContext, op: Operation, who: deps.Principal, verb: str) -> None:
    deps.require_operator(who)
    if op.principal == who.name and ctx.settings.auth != "dev":
        raise ApiError(
            403,
            "own_operation",
            f"{who.name!r} created this operation, so it may not {verb} it: another "
            "operator's key must decide.",
        )
    if op.state != State.AWAITING_APPROVAL:
        raise Conflict(
            "not_awaiting_approval",
            f"Operation is {op.state}; only a create held for approval can be approved or denied.",
            {"state": op.state.value},
        )


async def decide(
    ctx: AppContext, op: Operation, who: deps.Principal, *, approve: bool, reason: str
) -> Operation:
    """Apply one decision; 403 for the creating key, 409 when it is no longer held."""
    verb = "approve" if approve else "deny"
    _check(ctx, op, who, verb)
    now = ctx.now()
    gate: dict[str, Any] = dict(op.gate) if isinstance(op.gate, dict) else {}
    rule = str(gate.get("rule"))
    gate.update(
        decision="approved" if approve else "denied", by=who.name, reason=reason,
        at=now.isoformat(),
    )  # fmt: skip
    fields: dict[str, Any] = {"gate": gate, "lease_owner": None, "lease_expires_at": None}
    if approve:
        # The create's deadlines count from the approval: the time held is not the provider's.
        held = now - op.created_at
        fields.update(
            create_deadline_at=op.create_deadline_at + held,
            result_deadline_at=op.result_deadline_at + held,
            next_poll_at=now,
            next_poll_reason="approved",
        )
        to, kind = State.CREATE_PENDING, EvidenceKind.APPROVED
    else:
        fields.update(
            cost=0.0,
            next_poll_at=None,
            next_poll_reason=None,
            error={
                "code": "approval_denied",
                "message": f"denied by {who.name}: {reason.rstrip('. ')}",
                "details": {"by": who.name, "rule": gate.get("rule")},
            },
        )
        to, kind = State.FAILED, EvidenceKind.DENIED
    async with ctx.db.transaction() as txn:
        applied = await ledger.transition(
            ctx,
            txn,
            op,
            to,
            evidence=Evidence(kind, {"by": who.name}),
            actor=f"operator:{who.name}",
            cause=f"operator decision {verb}: {reason}",
            now=now,
            fence=None,
            fields=fields,
            data={"decision": verb, "reason": reason, "rule": gate.get("rule")},
        )
        if not applied:
            raise Conflict("operation_changed", "The operation changed; read it again.")
    APPROVALS.labels(rule, gate["decision"]).inc()
    ctx.notifier.kick()
    ctx.notifier.publish(op.id, done=not approve)
    return op
