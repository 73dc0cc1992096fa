"""The one claim of a leased work queue, shared by the operations table and the outbox.

A row is due when its `next` time has come and nobody holds a live lease on it. A
claim bumps the row's lease token (the fence every later write checks) and moves
`next` to the lease expiry, so a claimer that dies makes the row due again exactly
when its lease lapses, and the due index never returns rows being worked on.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import or_, select, update

from app.core.txn import Txn


class Due(NamedTuple):
    """A claimed row: its id, when it was due, and who held its (lapsed) lease before."""

    id: Any
    due_at: datetime
    prior_owner: str | None


async def claim(
    session: Txn,
    table: Any,
    *,
    next_column: str,
    now: datetime,
    owner: str,
    lease_seconds: float,
    limit: int,
    skip_locked: bool,
    where: tuple[Any, ...] = (),
    also: dict[str, Any] | None = None,
) -> list[Due]:
    """Lease up to `limit` due rows, oldest `next` first; returns them in that order.

    `where` narrows what is due (e.g. the outbox's pending status); `also` adds values
    written by the claim itself (e.g. the outbox's attempt counter).
    """
    c = table.c
    due_at = c[next_column]
    expires = now + timedelta(seconds=lease_seconds)
    due = select(c.id, due_at, c.lease_owner).where(
        due_at.is_not(None),
        due_at <= now,
        or_(c.lease_expires_at.is_(None), c.lease_expires_at <= now),
        *where,
    )
    due = due.order_by(due_at).limit(limit)
    if skip_locked:
        due = due.with_for_update(skip_locked=True)
    # Two statements, not `UPDATE ... WHERE id IN (subquery)`: PostgreSQL plans the
    # latter as a hash semi-join over a sequential scan of the whole table at mid
    # sizes. The selected rows stay locked (SKIP LOCKED; SQLite's IMMEDIATE
    # transaction) until this transaction commits.
    found = [Due(*row) for row in (await session.execute(due)).all()]
    ids = [row.id for row in found]
    if ids:
        await session.execute(
            update(table)
            .where(c.id.in_(ids))
            .values(
                lease_owner=owner,
                lease_token=c.lease_token + 1,
                lease_expires_at=expires,
                **{next_column: expires},
                **(also or {}),
            )
        )
    return found
