"""Leases: claiming due operations, renewing a held lease, the next due time."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import bindparam, or_, select, update

from app.core.db import queue
from app.core.db.txn import Txn
from app.core.obs import telemetry
from app.operations.domain.operation import Operation
from app.operations.repository.tables import OPS, Fence, operations_of, select_operations
from app.operations.repository.writes import fenced_update


async def claim_due(
    txn: Txn,
    *,
    now: datetime,
    owner: str,
    lease_seconds: float,
    limit: int,
    skip_locked: bool,
) -> list[Operation]:
    """Take a lease on up to `limit` due operations (see `core.queue.claim`)."""
    found = await queue.claim(
        txn,
        OPS,
        next_column="next_poll_at",
        now=now,
        owner=owner,
        lease_seconds=lease_seconds,
        limit=limit,
        skip_locked=skip_locked,
    )
    if not found:
        return []
    ids = [row.id for row in found]
    takeovers = sum(1 for row in found if row.prior_owner is not None)  # a lease that lapsed
    txn.on_commit(lambda: telemetry.claimed(now, [r.due_at for r in found], takeovers))
    rows = await txn.execute(_BY_IDS, {"k_ids": ids})
    ops = operations_of(rows)
    ops.sort(key=lambda o: ids.index(o.id))
    return ops


_BY_IDS = select_operations().where(OPS.c.id.in_(bindparam("k_ids", expanding=True)))


async def renew_lease(
    txn: Txn, op_id: str, *, fence: Fence, now: datetime, lease_seconds: float
) -> Witness | None:
    """Extend the fence's lease (the row falls due when it lapses); None if the lease is
    no longer the fence's. Nothing of the operation changes, so `updated_at` keeps its
    value; what another writer may have changed meanwhile comes back (`Witness`)."""
    expires = now + timedelta(seconds=lease_seconds)
    params = {"expires": expires, "k_id": op_id, "k_owner": fence.owner, "k_token": fence.token}
    row = (await txn.execute(_RENEW, params)).one_or_none()
    return None if row is None else Witness(row.version, row.cancel_requested_at)


@dataclass(frozen=True)
class Witness:
    """What another writer changes on a row its holder leases: an operator or a
    transition bumps `version`; a cancel intent sets `cancel_requested_at`."""

    version: int
    cancel_requested_at: datetime | None

    @classmethod
    def of(cls, op: Operation) -> Witness:
        return cls(op.version, op.cancel_requested_at)


_RENEW = (
    update(OPS)
    .where(
        OPS.c.id == bindparam("k_id"),
        OPS.c.lease_owner == bindparam("k_owner"),
        OPS.c.lease_token == bindparam("k_token"),
    )
    .values(lease_expires_at=bindparam("expires"), next_poll_at=bindparam("expires"))
    .returning(OPS.c.version, OPS.c.cancel_requested_at)
)


async def release_unstarted(txn: Txn, op: Operation, *, fence: Fence, due: datetime) -> bool:
    """Hand back a lease claimed (or held) but not worked under: the operation is due
    at `due` (now for a claim; a held poll keeps its own time).

    Nothing happened to it, so `updated_at` keeps its value; fenced, so a lease that
    already lapsed and was taken over is left to its new holder.
    """
    return await fenced_update(
        txn,
        op.id,
        fence=fence,
        at=op.updated_at,
        fields={"lease_owner": None, "lease_expires_at": None, "next_poll_at": due},
    )


async def next_due_at(txn: Txn, now: datetime) -> datetime | None:
    """When the earliest operation nobody holds is due (the due index answers it).

    Rows under a live lease are skipped: their holder polls them (a held poll's row
    shows its due time), or they fall due when the lease lapses, which the observer's
    bounded sleep catches.
    """
    stmt = (
        select(OPS.c.next_poll_at)
        .where(
            OPS.c.next_poll_at.is_not(None),
            or_(OPS.c.lease_expires_at.is_(None), OPS.c.lease_expires_at <= now),
        )
        .order_by(OPS.c.next_poll_at)
        .limit(1)
    )
    value: datetime | None = (await txn.execute(stmt)).scalar_one_or_none()
    return value
