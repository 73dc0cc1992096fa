"""The attention inbox and operators' recorded decisions (resolve).

Needs-attention states leave automation only through a decision that names who
and why; each decision is a history row and nothing before it is erased.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.exc import IntegrityError

from app.core.db.txn import Txn
from app.core.http.errors import Conflict, Invalid
from app.operations import ledger
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.contract.counted import with_errors
from app.operations.contract.schemas import ResolveRequest
from app.operations.domain.operation import Operation
from app.operations.domain.states import (
    HUMAN_WHY,
    NEEDS_ATTENTION,
    Evidence,
    EvidenceKind,
    State,
    TransitionRefused,
)
from app.operations.repository import gate
from app.operations.services import accept_check


async def inbox(txn: Txn, *, principal: str | None, limit: int) -> list[Operation]:
    """Oldest first: needs-attention states, unacknowledged partial results, and creates
    held for approval (docs/policy.md)."""
    found = await repo.attention_inbox(txn, principal=principal, limit=limit)
    found += await gate.awaiting_approval(txn, principal=principal, limit=limit)
    return sorted(found, key=lambda o: (o.updated_at, o.id))[:limit]


def _when(raw: object) -> str:
    """A stored ISO time as people read it: to the second, in UTC."""
    try:
        at = datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    except ValueError:
        return str(raw)
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def why(op: Operation) -> str | None:
    state = op.state
    if state in HUMAN_WHY:
        return HUMAN_WHY[state][0] + failing_since(op)
    if state == State.AWAITING_APPROVAL:
        held = op.gate if isinstance(op.gate, dict) else {}
        cost = held.get("cost")
        costs = f", cost {cost:g}" if isinstance(cost, int | float) and cost else ""
        return (
            f"held for approval (policy rule {held.get('rule')!r}{costs}, "
            f"asked by {held.get('requested_by')}, until {_when(held.get('deadline_at'))})"
        )
    if state != State.SUCCEEDED or op.acknowledged_at or not with_errors(op):
        return None
    summary = op.result_summary if isinstance(op.result_summary, dict) else {}
    failed, never = int(summary.get("failed") or 0), int(summary.get("not_processed") or 0)
    unit = str(summary.get("unit") or "items")
    if not failed and not never:
        return f"completed with errors: the provider counted none of the {unit} that failed"
    listed = f"{op.errors_listed} listed at /errors" if op.errors_listed else "none listed"
    return f"completed with errors: {failed} {unit} failed, {never} never processed ({listed})"


def failing_since(op: Operation) -> str:
    """Since when the provider gave no good answer, for an operation whose reads it kept
    refusing (docs/operations.md, "Reads that keep failing"); "" otherwise."""
    if op.read_failing_since is None:
        return ""
    since = op.read_failing_since.isoformat()
    if not op.read_failures:
        return f"; no good answer from the provider since {since} (last: {op.read_failure})"
    return (
        f"; no good answer from the provider since {since} ({op.read_failures} reads in a "
        f"row: {op.read_failure})"
    )


_TARGETS: dict[str, State] = {
    "resume_observing": State.OBSERVING,
    "accept_job": State.ACCEPTED,
    "retry_collection": State.RESULT_COLLECTING,
    "abandon": State.ABANDONED,
}


@dataclass(frozen=True)
class Resolved:
    """A recorded decision: the operation as it was read, and the words to add to the
    answer when a job was accepted by force, without proof."""

    operation: Operation
    forced: str | None = None


# Words of the in-progress situation only (the job is watched next): see lexicon.py.
FORCED = (
    "Job {job} was taken by force: the provider showed nothing that proves it is this "
    "operation's job."
)


async def resolve(ctx: AppContext, op: Operation, who: str, req: ResolveRequest) -> Resolved:
    """Apply one decision; 409 when it does not fit the operation's state."""
    now = ctx.now()
    actor = f"operator:{who}"
    if req.decision == "acknowledge":
        return Resolved(await _acknowledge(ctx, op, actor, req))
    state = op.state
    if state not in NEEDS_ATTENTION:
        raise Conflict(
            "not_needing_attention",
            f"Operation is {op.state}; only needs-attention states can be resolved.",
        )
    target = _TARGETS[req.decision]
    fields: dict[str, Any] = {
        "error": None,
        "poll_attempt": 0,
        "step_failures": 0,  # a resumed `stalled` operation gets its full allowance again
        "read_failures": 0,  # and reads refused before the decision count no more
        "read_failure": None,
        "read_failing_since": None,
        "next_poll_at": now,
        "lease_owner": None,
        "lease_expires_at": None,
    }
    if req.decision == "accept_job":
        if not req.remote_job_id:
            raise Invalid(
                "remote_job_id_required",
                "accept_job needs remote_job_id: the job the operator verified.",
            )
        fields["remote_job_id"] = req.remote_job_id
    elif req.decision in ("resume_observing", "retry_collection") and not op.remote_job_id:
        raise Conflict(
            "remote_job_unknown",
            "No remote job id is known; use accept_job with the verified id.",
        )
    if req.decision == "abandon":
        fields.update(
            next_poll_at=None,
            error={
                "code": "abandoned",
                "message": f"Abandoned by {who}: {req.reason}",
                "details": {"by": who, "previous_state": op.state},
            },
        )
    if req.result_deadline_seconds is not None:
        fields["result_deadline_at"] = now + timedelta(seconds=req.result_deadline_seconds)
    elif req.decision != "abandon" and op.result_deadline_at <= now:
        # The operation's state (its deadline has passed) is what refuses it: 409.
        raise Conflict(
            "result_deadline_required",
            "The result deadline has passed; give result_deadline_seconds.",
        )
    if state == State.CANCELLATION_UNCONFIRMED and req.decision != "abandon":
        fields["cancel_deadline_at"] = now + timedelta(
            seconds=req.result_deadline_seconds or ctx.settings.scaled(300)
        )
    evidence = Evidence(
        EvidenceKind.OPERATOR_DECISION, {"decision": req.decision, "by": who}, operator=True
    )
    data: dict[str, Any] = {"decision": req.model_dump()}
    before: list[repo.HistoryRow] = []
    cause = f"operator decision {req.decision}: {req.reason}"
    forced: str | None = None
    if req.decision == "accept_job" and req.remote_job_id:
        # What the provider shows of the job, read before any write (accept_check.py).
        checked = await accept_check.verify(ctx, op, req.remote_job_id, force=req.force)
        data["checked"] = checked.checks
        for ex in checked.exchanges:
            said = f"{ex.operation} {ex.method} -> {ex.status_code}"
            before.append(
                ledger.row(op, kind="exchange", actor=actor, cause=said, now=now, data=ex.to_dict())
            )
        if checked.forced:
            forced = FORCED.format(job=req.remote_job_id)
            cause = f"operator decision {req.decision}, forced without proof: {req.reason}"
    try:
        async with ctx.db.transaction() as txn:
            if req.decision == "accept_job" and req.remote_job_id:  # again, where it is written
                await accept_check.not_bound_elsewhere(txn, op, req.remote_job_id)
            try:
                applied = await ledger.transition(
                    ctx,
                    txn,
                    op,
                    target,
                    evidence=evidence,
                    actor=actor,
                    cause=cause,
                    now=now,
                    fence=None,
                    fields=fields,
                    data=data,
                    before=before,
                )
            except TransitionRefused as err:
                raise Conflict("decision_not_allowed", str(err)) from err
            if not applied:
                raise Conflict("operation_changed", "The operation changed; read it again.")
    except IntegrityError as err:
        if req.decision != "accept_job" or not req.remote_job_id:
            raise
        # A concurrent accept_job bound the job first: the unique index refused this one.
        async with ctx.db.read() as txn:
            await accept_check.not_bound_elsewhere(txn, op, req.remote_job_id)
        raise Conflict("operation_changed", "The operation changed; read it again.") from err
    ctx.notifier.kick()
    ctx.notifier.publish(op.id)
    return Resolved(op, forced)


async def _acknowledge(
    ctx: AppContext, op: Operation, actor: str, req: ResolveRequest
) -> Operation:
    if why(op) is None or op.state != State.SUCCEEDED:
        raise Conflict(
            "nothing_to_acknowledge",
            "acknowledge applies to completed-with-errors results in the inbox.",
        )
    now = ctx.now()
    async with ctx.db.transaction() as txn:
        applied = await repo.operator_update(
            txn,
            op.id,
            expected_version=op.version,
            at=now,
            fields={"acknowledged_at": now, "acknowledged_by": actor},
        )
        if not applied:  # another decision landed since this request read the operation
            raise Conflict("operation_changed", "The operation changed; read it again.")
        await ledger.record(
            txn,
            op,
            kind="decision",
            actor=actor,
            cause=f"operator acknowledged partial results: {req.reason}",
            now=now,
            data={"decision": req.model_dump()},
        )
        fresh = await repo.get(txn, op.id)
    return fresh or op
