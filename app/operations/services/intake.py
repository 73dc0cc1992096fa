"""Intake: validate, record the intent durably, then hand the operation to the runner.

Intent before effect: the operation row (token, fingerprint, deadlines, trace id,
caller) is committed before any provider call, and the request holds the first
lease so no observer races it; if the process dies, the lease lapses and an
observer resumes the create with the same token. The request answers within
`create_answer_seconds` whatever the provider does: the create goes on in a task of
its own (app/core/runtime/background.py), still under that lease.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import rfc8785
from sqlalchemy.exc import IntegrityError
from ulid import ULID

from app.core.db import write_faults
from app.core.db.txn import Txn
from app.core.http.errors import BadInput, Gone, Invalid
from app.core.http.fault_words import CreateInterrupted, Intent
from app.core.http.ssrf import check_callback_url
from app.core.obs import telemetry, tracecontext
from app.core.runtime import faults
from app.operations import ledger
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.contract import ids, pruned
from app.operations.contract.schemas import CreateOperationRequest
from app.operations.domain.operation import Operation
from app.operations.domain.states import State
from app.operations.driver.runner import process
from app.operations.driver.single_create import INTAKE_LEASE_TOKEN
from app.operations.repository import Fence
from app.operations.services import admission
from app.operations.services.gateway_options import check_input
from app.policy.counters import APPROVALS
from app.policy.rules import Subject

MAX_KEY_LENGTH = 255


def fingerprint(provider: str, kind: str, input_: Any) -> str:
    """sha256 of the RFC 8785 canonical JSON of what makes two requests the same."""
    raw = rfc8785.dumps({"provider": provider, "kind": kind, "input": input_})
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def new_operation_id() -> str:
    return f"op_{ULID()}"


def new_trace_id() -> str:
    return f"tr_{secrets.token_hex(16)}"


def new_provider_token() -> str:
    """High-entropy, never derived from the caller's key (keys are per caller, tokens global)."""
    return f"jg_{secrets.token_urlsafe(24)}"


def check_key(key: str | None) -> str:
    if not key:
        raise BadInput(
            "idempotency_key_required",
            "Send an Idempotency-Key header: a unique string you choose for this logical "
            "operation (for example a UUID you generate once and store with your task). "
            "Reuse the SAME key when you retry after a timeout, so the work is not started "
            "twice; use a NEW key only for new work.",
        )
    # ASCII only: a header's other bytes reach us as Latin-1 and would be stored garbled.
    if len(key) > MAX_KEY_LENGTH or not ids.is_idempotency_key(key):
        raise BadInput(
            "idempotency_key_invalid",
            f"Idempotency-Key must be printable ASCII (no space at either end) and at most "
            f"{MAX_KEY_LENGTH} chars.",
        )
    return key


def check_target(ctx: AppContext, req: CreateOperationRequest) -> None:
    profile = ctx.profiles.get(req.provider)
    if profile is None:
        raise Invalid(
            "unknown_provider",
            f"No provider profile named {req.provider!r}.",
            {"known": sorted(ctx.profiles)},
        )
    if req.kind not in profile.kinds:
        raise Invalid(
            "unknown_kind",
            f"Provider {req.provider!r} has no kind {req.kind!r}.",
            {"known": sorted(profile.kinds)},
        )
    reason = profile.unavailable(ctx.env)
    if reason is not None:
        raise Invalid(
            "provider_unavailable",
            f"Provider {req.provider!r} cannot be called on this gateway: {reason.rstrip('.')}. "
            "Nothing was recorded; an operator must configure it first.",
            {"provider": req.provider},
        )


@dataclass
class _Progress:
    """How far a create got, for the words of a fault's answer (fault_words.py)."""

    intent: Intent = "not_recorded"
    operation_id: str | None = None


async def create(
    ctx: AppContext,
    principal: str,
    key: str | None,
    req: CreateOperationRequest,
    traceparent: str | None = None,
    *,
    role: str = "agent",
) -> tuple[Operation, bool]:
    """Returns (operation, replayed). A valid W3C `traceparent` sets the trace id.

    The policy (docs/policy.md) is checked for new creates only, in the transaction that
    records them: a refusal writes nothing; a create that needs approval is recorded in
    `awaiting_approval` and nothing is started. A storage or database fault is raised as
    `CreateInterrupted`, saying whether the intent was recorded, as far as is known."""
    progress = _Progress()
    try:
        return await _create(ctx, principal, key, req, traceparent, role, progress)
    except Exception as err:
        kind = write_faults.kind_of(err)
        if kind is None:
            raise
        intent = progress.intent
        if intent == "unknown" and kind != "database_unavailable":
            # The database answered the COMMIT (or the writes just before it) with a
            # refusal: the transaction did not commit. Only a connection lost there
            # leaves it unknown.
            intent = "not_recorded"
        raise CreateInterrupted(intent, progress.operation_id) from err


async def _create(
    ctx: AppContext,
    principal: str,
    key: str | None,
    req: CreateOperationRequest,
    traceparent: str | None,
    role: str,
    progress: _Progress,
) -> tuple[Operation, bool]:
    key = check_key(key)
    check_target(ctx, req)
    check_input(ctx.profiles[req.provider], req.kind, req.input)
    fp = fingerprint(req.provider, req.kind, req.input)
    if req.callback_url is not None:  # SSRF guard, before anything is written
        # A replay is answered before the guard (its callback was checked when it was new).
        async with ctx.db.read() as txn:
            existing = await repo.get_by_key(txn, principal, key)
            if existing is None:
                await _refuse_pruned(txn, principal, key, fp)
        if existing is not None:
            return _replay(existing, fp), True
        await check_callback_url(
            str(req.callback_url),
            allow_private=ctx.settings.allow_private_callbacks,
            resolver=ctx.resolver,
        )
    parent = tracecontext.parse(traceparent)
    op = _new_operation(ctx, principal, key, fp, req)
    if parent is not None:
        op.trace_id = parent.jobgate_trace_id
    subject = Subject(principal, role, req.provider, req.kind, dict(req.labels))
    try:
        async with ctx.db.transaction() as txn:
            if req.callback_url is None:  # the replay check rides on the intent's transaction
                existing = await repo.get_by_key(txn, principal, key)
                if existing is not None:
                    raise _Replay(existing)  # nothing was written: it rolls back
                await _refuse_pruned(txn, principal, key, fp)
            admitted = await admission.admit(txn, ctx.policy, subject, req.input, op.created_at)
            if ctx.policy is not None:
                op.cost = admitted.cost
            if admitted.gate_rule is not None:
                _hold_for_approval(ctx, op, principal, admitted)
            await ledger.record_intent(
                txn,
                op,
                actor=f"agent:{principal}",
                cause="intent recorded before any provider call"
                if admitted.gate_rule is None
                else f"intent recorded; held for approval (policy rule {admitted.gate_rule!r}) "
                "before any provider call",
                data={
                    **({"gate": op.gate, "cost": op.cost} if op.gate else {}),
                    "fingerprint": fp,
                    "idempotency_key": key,
                    "trace_id": op.trace_id,
                    **({"traceparent": traceparent.strip()} if parent and traceparent else {}),
                    "provider_token": op.provider_token,
                    "single_create": op.single_create,
                    "deadlines": {
                        "create_at": op.create_deadline_at.isoformat(),
                        "result_at": op.result_deadline_at.isoformat(),
                    },
                },
            )
            progress.intent = "unknown"  # written; a fault from here on meets the COMMIT
    except _Replay as replay:
        return _replay(replay.op, fp), True
    except IntegrityError:
        progress.intent = "not_recorded"  # rolled back: another request holds the key
        # A concurrent request with the same key won the insert: answer as its replay.
        async with ctx.db.transaction() as txn:
            existing = await repo.get_by_key(txn, principal, key)
        if existing is None:
            raise
        return _replay(existing, fp), True
    progress.intent, progress.operation_id = "recorded", op.id
    telemetry.transition(
        op.id, op.trace_id, None, op.state, actor=f"agent:{principal}", cause="intent recorded",
        version=0,
    )  # fmt: skip
    if op.state == State.AWAITING_APPROVAL:  # nothing starts until an operator approves
        APPROVALS.labels(str(op.gate["rule"]), "required").inc()
        ctx.notifier.kick()
        return op, False
    faults.maybe_crash(ctx.settings, "after_intent_commit")
    # The create runs as a task of its own, under the intake lease: the request waits for
    # it only `create_answer_seconds`, and a slower provider (or a request that is gone)
    # leaves it running. A retry with the same key meets the same row meanwhile.
    task = ctx.background.start(_first_steps(ctx, op), name=f"create {op.id}")
    done, _ = await asyncio.wait({task}, timeout=ctx.settings.create_answer_seconds)
    if task in done:
        task.result()  # its failure is this request's, as before
        return op, False
    async with ctx.db.read() as txn:  # committed state only: the task is mid-step
        fresh = await repo.get(txn, op.id)
    return fresh or op, False


async def _first_steps(ctx: AppContext, op: Operation) -> None:
    """The create and what follows at once, under the intake lease. The in-process
    observer, if one runs, takes the first poll over when it is due soon, or is told
    when it falls due (Holder.released): no claim is needed to find it."""
    await process(ctx, op, Fence(op.lease_owner or "", op.lease_token), ctx.holder)
    if ctx.holder is None:
        ctx.notifier.kick()


def _hold_for_approval(
    ctx: AppContext, op: Operation, principal: str, admitted: admission.Admission
) -> None:
    """The create waits in `awaiting_approval`: no intake lease, due at its deadline."""
    deadline = op.created_at + timedelta(seconds=ctx.settings.approval_seconds)
    op.state = State.AWAITING_APPROVAL
    op.lease_owner = None
    op.lease_expires_at = None
    op.lease_token = 0
    op.next_poll_at = deadline
    op.next_poll_reason = "approval deadline"
    op.gate = {
        "rule": admitted.gate_rule,
        "requested_by": principal,
        "cost": admitted.cost,
        "deadline_at": deadline.isoformat().replace("+00:00", "Z"),
    }


class _Replay(Exception):
    """The key names an operation already: out of the intent's transaction, to answer it."""

    def __init__(self, op: Operation) -> None:
        super().__init__(op.id)
        self.op = op


async def _refuse_pruned(txn: Txn, principal: str, key: str, fp: str) -> None:
    """A key whose operation was pruned is never started again: `410 operation_pruned`
    with what its tombstone keeps (docs/operations.md, "Retention")."""
    tomb = await repo.tombstone(txn, principal, key)
    if tomb is None:
        return
    same = tomb.fingerprint == fp
    raise Gone(
        "operation_pruned",
        pruned.message(tomb, replay=True, same_request=same),
        pruned.details(tomb, same_request=same),
    )


def _replay(existing: Operation, fp: str) -> Operation:
    if existing.fingerprint != fp:
        raise Invalid(
            "idempotency_key_reused",
            "This Idempotency-Key was already used for a DIFFERENT request (provider, kind or "
            "input changed). A changed input is a new operation: choose a new key.",
            {"operation_id": existing.id},
        )
    return existing


def _new_operation(
    ctx: AppContext, principal: str, key: str, fp: str, req: CreateOperationRequest
) -> Operation:
    now = ctx.now()
    profile = ctx.profiles[req.provider]
    asked = req.deadlines

    def seconds(asked_value: float | None, default: float) -> float:
        return asked_value if asked_value is not None else ctx.settings.scaled(default)

    create_s = seconds(asked.create_seconds if asked else None, profile.deadlines.create_seconds)
    result_s = seconds(asked.result_seconds if asked else None, profile.deadlines.result_seconds)
    lease_until = now + timedelta(seconds=ctx.lease_seconds)
    return Operation(
        id=new_operation_id(),
        principal=principal,
        idempotency_key=key,
        fingerprint=fp,
        provider=req.provider,
        kind=req.kind,
        input=req.input,
        provider_token=new_provider_token(),
        trace_id=new_trace_id(),
        single_create=profile.single_create.value,
        state=State.CREATE_PENDING,
        version=0,
        create_deadline_at=now + timedelta(seconds=create_s),
        result_deadline_at=now + timedelta(seconds=max(result_s, create_s)),
        cancel_seconds=asked.cancel_seconds if asked else None,
        next_poll_at=lease_until,  # due again only if this request dies holding the lease
        poll_attempt=0,
        lease_owner=f"{ctx.worker_id}/intake",
        lease_expires_at=lease_until,
        lease_token=INTAKE_LEASE_TOKEN,
        callback_url=str(req.callback_url) if req.callback_url else None,
        labels=req.labels,
        approval=req.approval,
        validation=req.validation.model_dump(exclude_none=True) if req.validation else None,
        created_at=now,
        updated_at=now,
    )
