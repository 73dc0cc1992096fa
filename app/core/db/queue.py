"""The one claim of a leased work queue, shared by the operations table and the outbox.

A row is due when its `next` time has come and nobody holds a live lease on it. A
claim bumps the row's lease token (the fence every later write checks) and moves
`next` to the lease expiry, so a claimer that dies makes the row due again exactly
when its lease lapses, and the due index never returns rows being worked on.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, Integer, Select, Table, Update, bindparam, or_, select, update

from app.core.db.txn import Txn


class Due(NamedTuple):
    """A claimed row: its id, when it was due, and who held its (lapsed) lease before."""

    id: str | int
    due_at: datetime
    prior_owner: str | None


async def claim(
    txn: Txn,
    table: Table,
    *,
    next_column: str,
    now: datetime,
    owner: str,
    lease_seconds: float,
    limit: int,
    skip_locked: bool,
    where: tuple[ColumnElement[bool], ...] = (),
    also: Mapping[str, ColumnElement[Any]] | None = None,
) -> list[Due]:
    """Lease up to `limit` due rows, oldest `next` first; returns them in that order.

    `where` narrows what is due (e.g. the outbox's pending status); `also` adds SET
    expressions of the claim itself (e.g. the outbox's attempt counter). Both are
    constants of the caller, built once: the statements are kept per their objects.
    """
    expires = now + timedelta(seconds=lease_seconds)
    due, claim_rows = _statements(table, next_column, skip_locked, where, also or {})
    # Two statements, not `UPDATE ... WHERE id IN (subquery)`: PostgreSQL plans the
    # latter as a hash semi-join over a sequential scan of the whole table at mid
    # sizes. The selected rows stay locked (SKIP LOCKED; SQLite's IMMEDIATE
    # transaction) until this transaction commits.
    rows = await txn.execute(due, {"k_now": now, "k_limit": limit})
    found = [Due(*row) for row in rows.all()]
    if found:
        values = {"lease_owner": owner, "lease_expires_at": expires, next_column: expires}
        await txn.execute(claim_rows, {**values, "k_ids": [r.id for r in found]})
    return found


_STATEMENTS: dict[tuple[object, ...], tuple[Select[Any], Update]] = {}
_KEEP: list[object] = []


def _statements(
    table: Table,
    next_column: str,
    skip_locked: bool,
    where: tuple[ColumnElement[bool], ...],
    also: Mapping[str, ColumnElement[Any]],
) -> tuple[Select[Any], Update]:
    """The claim's SELECT and UPDATE for one table and shape, built once (compiling
    costs more than running them); the values of a claim are bound by name (`k_*`).
    `where` and `also` are the caller's constants (their objects key the cache)."""
    key = (table, next_column, skip_locked, where, id(also))
    found = _STATEMENTS.get(key)
    if found is not None:
        return found
    c = table.c
    due_at = c[next_column]
    now = bindparam("k_now", type_=due_at.type)
    due = select(c.id, due_at, c.lease_owner).where(
        due_at.is_not(None),
        due_at <= now,
        or_(c.lease_expires_at.is_(None), c.lease_expires_at <= now),
        *where,
    )
    due = due.order_by(due_at).limit(bindparam("k_limit", type_=Integer))
    if skip_locked:
        due = due.with_for_update(skip_locked=True)
    claim_rows = (
        update(table)
        .where(c.id.in_(bindparam("k_ids", expanding=True)))
        .values(lease_token=c.lease_token + 1, **also)
    )
    _STATEMENTS[key] = due, claim_rows
    _KEEP.append(also)  # its id stays its own
    return due, claim_rows
