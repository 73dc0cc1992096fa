"""The completion outbox: enqueue with the state change, claim under a lease, record.

All SQL of callbacks lives here; functions execute, never commit. The delivery
loop (`delivery.py`) owns the transactions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, select, update

from app.callbacks.models import CallbackAttempt, CallbackOutbox
from app.core.db import queue
from app.core.db.row_table import table_of
from app.core.db.sql import insert_if_absent
from app.core.db.txn import Txn
from app.operations.contract.presenter import to_body
from app.operations.domain.operation import Operation
from app.operations.domain.states import State

OUTBOX = table_of(CallbackOutbox)
ATTEMPTS = table_of(CallbackAttempt)
EVENT_TYPE = "operation.completed"

PENDING = "pending"
DELIVERED = "delivered"
FAILED = "failed"  # gave up after the last attempt


def event_id_for(operation_id: str, final_state: State) -> str:
    """Stable across retries and processes, so receivers can de-duplicate."""
    return f"{operation_id}:{final_state.value}"


def completion_payload(op: Operation, now: datetime) -> dict[str, Any]:
    """The `operation.completed` event: the agent body as of now."""
    return {"type": EVENT_TYPE, "data": to_body(op, now).model_dump(mode="json")}


async def enqueue_completion(txn: Txn, op: Operation, final_state: State, now: datetime) -> bool:
    """Add the completion event in the caller's transaction; False if it already exists.

    `op` must already reflect the new state: the payload is the agent body as of now.
    """
    payload = completion_payload(op, now)
    row = {
        "event_id": event_id_for(op.id, final_state),
        "operation_id": op.id,
        "url": op.callback_url,
        "payload": payload,
        "status": PENDING,
        "attempts": 0,
        "next_attempt_at": now,
        "lease_token": 0,
        "created_at": now,
    }
    return await insert_if_absent(txn, OUTBOX, row)


async def on_done(txn: Txn, op: Operation, state: State, now: datetime) -> None:
    """The ledger's done handler: enqueue the completion event of an operation with a
    callback URL, in the transaction that made it done."""
    if op.callback_url:
        await enqueue_completion(txn, op, state, now)


@dataclass(frozen=True)
class Claimed:
    """One outbox row taken for one attempt, with the fence of that claim."""

    id: int
    event_id: str
    operation_id: str
    url: str
    payload: Any
    attempt: int
    owner: str
    token: int


# The claim's narrowing and its own SET, built once (app/core/db/queue.py keeps its
# statements per these objects).
_CLAIMABLE = (OUTBOX.c.status == PENDING,)
_CLAIM_SETS = {"attempts": OUTBOX.c.attempts + 1}


async def claim_due(
    txn: Txn,
    *,
    now: datetime,
    owner: str,
    lease_seconds: float,
    limit: int,
    skip_locked: bool,
) -> list[Claimed]:
    """Take due pending events under a lease (`claim` of app/core/db/queue.py), numbering
    the attempt.

    The attempt number is bumped by the claim itself, so two claims of one event
    (a lapsed lease) never share a number.
    """
    due = await queue.claim(
        txn,
        OUTBOX,
        next_column="next_attempt_at",
        now=now,
        owner=owner,
        lease_seconds=lease_seconds,
        limit=limit,
        skip_locked=skip_locked,
        where=_CLAIMABLE,
        also=_CLAIM_SETS,
    )
    if not due:
        return []
    ids = [row.id for row in due]
    stmt = select(
        OUTBOX.c.id,
        OUTBOX.c.event_id,
        OUTBOX.c.operation_id,
        OUTBOX.c.url,
        OUTBOX.c.payload,
        OUTBOX.c.attempts,
        OUTBOX.c.lease_token,
    ).where(OUTBOX.c.id.in_(ids))
    order = {id_: i for i, id_ in enumerate(ids)}
    rows = sorted((await txn.execute(stmt)).all(), key=lambda r: order[r.id])
    return [
        Claimed(
            id=r.id,
            event_id=r.event_id,
            operation_id=r.operation_id,
            url=r.url,
            payload=r.payload,
            attempt=r.attempts,
            owner=owner,
            token=r.lease_token,
        )
        for r in rows
    ]


async def record_attempt(
    txn: Txn,
    claim: Claimed,
    *,
    at: datetime,
    status_code: int | None,
    error: str | None,
    response_body: str | None,
    duration_ms: float,
    outcome: str,
    next_attempt_at: datetime | None,
) -> bool:
    """Append the attempt row and settle the outbox row, fenced by the claim.

    The attempt row is written even when the lease was lost: the call happened.
    Returns whether the outbox row was still ours.
    """
    await txn.execute(
        ATTEMPTS.insert().values(
            outbox_id=claim.id,
            event_id=claim.event_id,
            attempt=claim.attempt,
            at=at,
            worker=claim.owner,
            status_code=status_code,
            error=error,
            response_body=response_body,
            duration_ms=duration_ms,
            outcome=outcome,
        )
    )
    status = {"delivered": DELIVERED, "gave_up": FAILED}.get(outcome, PENDING)
    values: dict[str, Any] = {
        "status": status,
        "lease_owner": None,
        "lease_expires_at": None,
        "next_attempt_at": next_attempt_at if status == PENDING else None,
        "last_error": error if outcome != "delivered" else None,
    }
    if status == DELIVERED:
        values["delivered_at"] = at
    stmt = (
        update(OUTBOX)
        .where(
            and_(
                OUTBOX.c.id == claim.id,
                OUTBOX.c.lease_owner == claim.owner,
                OUTBOX.c.lease_token == claim.token,
            )
        )
        .values(**values)
    )
    result = await txn.execute(stmt)
    return result.rowcount == 1


async def for_operation(txn: Txn, op_id: str) -> list[CallbackOutbox]:
    """The outbox rows of one operation, oldest first."""
    stmt = select(CallbackOutbox).where(OUTBOX.c.operation_id == op_id)
    return list((await txn.execute(stmt.order_by(OUTBOX.c.id))).scalars())


async def attempts_for(txn: Txn, outbox_id: int) -> list[CallbackAttempt]:
    """Every attempt of one outbox row, in order."""
    stmt = select(CallbackAttempt).where(ATTEMPTS.c.outbox_id == outbox_id)
    return list((await txn.execute(stmt.order_by(ATTEMPTS.c.attempt))).scalars())
