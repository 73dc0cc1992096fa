"""All SQL about operations and their history. Functions flush, never commit."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.exc import DataError
from sqlalchemy.ext.asyncio import AsyncSession

from app import audit
from app.core import queue, telemetry
from app.core.after_commit import on_commit
from app.operations.models import HistoryEntry, Operation, ResultItem
from app.operations.states import State

OPS = Operation.__table__  # type: ignore[attr-defined]
HIST = HistoryEntry.__table__  # type: ignore[attr-defined]
ITEMS = ResultItem.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Fence:
    """Who may write: the lease holder's owner id and the token its claim received."""

    owner: str
    token: int


async def insert_operation(session: AsyncSession, op: Operation) -> None:
    session.add(op)
    await session.flush()


async def get(session: AsyncSession, op_id: str) -> Operation | None:
    return await session.get(Operation, op_id, populate_existing=True)


async def get_by_key(session: AsyncSession, principal: str, key: str) -> Operation | None:
    stmt = select(Operation).where(OPS.c.principal == principal, OPS.c.idempotency_key == key)
    return (await session.execute(stmt)).scalar_one_or_none()


async def get_by_remote_job(
    session: AsyncSession, provider: str, remote_job_id: str
) -> Operation | None:
    """The operation that owns this remote job (oldest first if, wrongly, several do)."""
    stmt = (
        select(Operation)
        .where(OPS.c.provider == provider, OPS.c.remote_job_id == remote_job_id)
        .order_by(OPS.c.created_at)
        .limit(1)
        .execution_options(populate_existing=True)
    )
    return (await session.execute(stmt)).scalar_one_or_none()


async def make_due_now(session: AsyncSession, op_id: str, *, now: datetime, reason: str) -> bool:
    """Make the operation due now, if automation still runs it and nobody holds it.

    A NULL `next_poll_at` means the gateway has nothing more to do (done): a late
    event must not revive it. A live lease means its holder steps soon anyway, and
    its own schedule write would overwrite ours. Already due: nothing to change.
    """
    stmt = (
        update(OPS)
        .where(
            OPS.c.id == op_id,
            OPS.c.next_poll_at.is_not(None),
            OPS.c.next_poll_at > now,
            or_(OPS.c.lease_expires_at.is_(None), OPS.c.lease_expires_at <= now),
        )
        .values(next_poll_at=now, next_poll_reason=reason[:200])
    )
    result = await session.execute(stmt)
    return result.rowcount == 1  # type: ignore[attr-defined,no-any-return]


async def append_history(
    session: AsyncSession,
    *,
    operation_id: str,
    at: datetime,
    kind: str,
    actor: str,
    cause: str,
    from_state: str | None = None,
    to_state: str | None = None,
    data: Any = None,
) -> None:
    await session.execute(
        HIST.insert().values(
            operation_id=operation_id,
            at=at,
            kind=kind,
            actor=actor,
            cause=cause,
            from_state=from_state,
            to_state=to_state,
            data=data,
        )
    )
    # Its audit entry commits with it (and only with it).
    audit.record_history(
        session,
        operation_id=operation_id,
        at=at,
        kind=kind,
        actor=actor,
        cause=cause,
        from_state=from_state,
        to_state=to_state,
        data=data,
    )


def _fenced(op_id: str, fence: Fence | None) -> Any:
    """The row, and (given a fence) only while that lease still holds it."""
    cond = OPS.c.id == op_id
    if fence is not None:
        cond = and_(cond, OPS.c.lease_owner == fence.owner, OPS.c.lease_token == fence.token)
    return cond


async def transition(
    session: AsyncSession,
    op_id: str,
    *,
    expect_state: State,
    expect_version: int,
    to: State,
    fence: Fence | None,
    at: datetime,
    fields: dict[str, Any],
) -> bool:
    """Compare-and-set the state; True only if the row still had the expected state,
    version and (when fenced) lease. The caller writes the history row when applied."""
    stmt = (
        update(OPS)
        .where(
            _fenced(op_id, fence),
            OPS.c.state == expect_state.value,
            OPS.c.version == expect_version,
        )
        .values(state=to.value, version=OPS.c.version + 1, updated_at=at, **fields)
    )
    result = await session.execute(stmt)
    applied: bool = result.rowcount == 1  # type: ignore[attr-defined]
    if applied and session.get_bind().dialect.name == "postgresql":
        # Delivered on commit, so listeners never see a change that rolled back.
        await session.execute(select(func.pg_notify("jobgate_ops", op_id)))
    return applied


async def fenced_update(
    session: AsyncSession,
    op_id: str,
    *,
    fence: Fence,
    at: datetime,
    fields: dict[str, Any],
    expect_state: State | None = None,
) -> bool:
    """Write fields without a state change (observations, schedule), fenced by the lease."""
    cond = _fenced(op_id, fence)
    if expect_state is not None:
        cond = and_(cond, OPS.c.state == expect_state.value)
    result = await session.execute(update(OPS).where(cond).values(updated_at=at, **fields))
    return result.rowcount == 1  # type: ignore[attr-defined,no-any-return]


async def operator_update(
    session: AsyncSession,
    op_id: str,
    *,
    expected_version: int,
    at: datetime,
    fields: dict[str, Any],
) -> bool:
    """An operator's write without a state change; refused (False) if the row moved on.

    Compare-and-set on the version the operator's request read, so a second,
    concurrent decision can never overwrite the first.
    """
    stmt = (
        update(OPS)
        .where(OPS.c.id == op_id, OPS.c.version == expected_version)
        .values(version=OPS.c.version + 1, updated_at=at, **fields)
    )
    result = await session.execute(stmt)
    return result.rowcount == 1  # type: ignore[attr-defined,no-any-return]


async def record_cancel_intent(
    session: AsyncSession,
    op_id: str,
    *,
    now: datetime,
    by: str,
    reason: str,
    deadline: datetime,
    done_states: list[str],
) -> bool:
    """Record who asked to cancel, why and by when (once; never on a done operation)."""
    stmt = (
        update(OPS)
        .where(
            OPS.c.id == op_id, OPS.c.cancel_requested_at.is_(None), OPS.c.state.not_in(done_states)
        )
        .values(
            cancel_requested_at=now,
            cancel_requested_by=by,
            cancel_reason=reason,
            cancel_deadline_at=deadline,
            updated_at=now,
        )
    )
    return (await session.execute(stmt)).rowcount == 1  # type: ignore[attr-defined,no-any-return]


async def claim_due(
    session: AsyncSession,
    *,
    now: datetime,
    owner: str,
    lease_seconds: float,
    limit: int,
    skip_locked: bool,
) -> list[Operation]:
    """Take a lease on up to `limit` due operations (see `core.queue.claim`)."""
    found = await queue.claim(
        session,
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
    on_commit(session, lambda: telemetry.claimed(now, [r.due_at for r in found], takeovers))
    rows = await session.execute(
        select(Operation).where(OPS.c.id.in_(ids)).execution_options(populate_existing=True)
    )
    ops = list(rows.scalars())
    ops.sort(key=lambda o: ids.index(o.id))
    return ops


async def renew_lease(
    session: AsyncSession, op_id: str, *, fence: Fence, now: datetime, lease_seconds: float
) -> bool:
    expires = now + timedelta(seconds=lease_seconds)
    return await fenced_update(
        session,
        op_id,
        fence=fence,
        at=now,
        fields={"lease_expires_at": expires, "next_poll_at": expires},
    )


async def history(session: AsyncSession, op_id: str, *, after: int = 0) -> list[HistoryEntry]:
    """History rows in order; `after` skips those already seen (SSE resumes by id)."""
    stmt = (
        select(HistoryEntry)
        .where(HIST.c.operation_id == op_id, HIST.c.id > after)
        .order_by(HIST.c.id)
    )
    return list((await session.execute(stmt)).scalars())


async def sent_creates(session: AsyncSession, op_id: str) -> int:
    """Create calls that left jobgate for this operation, counted from its exchange rows
    (a local refusal has no method: nothing was sent)."""
    stmt = select(HIST.c.data).where(
        HIST.c.operation_id == op_id, HIST.c.kind == "exchange", HIST.c.cause.like("create %")
    )
    rows = (await session.execute(stmt)).scalars()
    return sum(
        1
        for d in rows
        if isinstance(d, dict) and d.get("operation") == "create" and d.get("method")
    )


@dataclass(frozen=True)
class ListFilter:
    principal: str | None = None
    states: tuple[str, ...] = ()
    provider: str | None = None
    trace_id: str | None = None
    label: tuple[str, str] | None = None
    in_flight: bool | None = None


async def list_operations(
    session: AsyncSession,
    flt: ListFilter,
    *,
    limit: int,
    before: tuple[datetime, str] | None,
    done_states: frozenset[str],
) -> list[Operation]:
    """Newest first; keyset pagination on (created_at, id)."""
    stmt = select(Operation)
    if flt.principal is not None:
        stmt = stmt.where(OPS.c.principal == flt.principal)
    if flt.states:
        stmt = stmt.where(OPS.c.state.in_(flt.states))
    if flt.provider:
        stmt = stmt.where(OPS.c.provider == flt.provider)
    if flt.trace_id:
        stmt = stmt.where(OPS.c.trace_id == flt.trace_id)
    if flt.in_flight is True:
        stmt = stmt.where(OPS.c.state.not_in(done_states))
    elif flt.in_flight is False:
        stmt = stmt.where(OPS.c.state.in_(done_states))
    if before is not None:
        ts, op_id = before
        stmt = stmt.where(
            or_(OPS.c.created_at < ts, and_(OPS.c.created_at == ts, OPS.c.id < op_id))
        )
    stmt = stmt.order_by(OPS.c.created_at.desc(), OPS.c.id.desc())
    if flt.label is None:
        return list((await session.execute(stmt.limit(limit))).scalars())
    # JSON operators on both back-ends (json_extract on SQLite, ->> on PostgreSQL).
    key, value = flt.label
    by_label = stmt.where(OPS.c.labels[key].as_string() == value).limit(limit)
    if session.get_bind().dialect.name != "postgresql":
        return list((await session.execute(by_label)).scalars())
    try:
        async with session.begin_nested():
            return list((await session.execute(by_label)).scalars())
    except DataError:
        # PostgreSQL's ->> refuses rows an older version stored with unencodable text
        # (issue 8); only a database holding such rows pays for the scan below.
        return await _scan_labels(session, stmt, key, value, limit)


async def _scan_labels(
    session: AsyncSession, stmt: Any, key: str, value: str, limit: int
) -> list[Operation]:
    out: list[Operation] = []
    async for op in await session.stream_scalars(stmt):
        if isinstance(op.labels, dict) and str(op.labels.get(key)) == value:
            out.append(op)
            if len(out) >= limit:
                break
    return out


async def attention_inbox(
    session: AsyncSession, *, principal: str | None, limit: int, attention: frozenset[State]
) -> list[Operation]:
    """Oldest first: needs-attention states, plus unacknowledged partial results.

    A partial result is a succeeded operation whose summary counts failed items;
    the whole condition is in SQL, so the page is exactly `limit` rows at most.
    """
    partial = and_(
        OPS.c.state == State.SUCCEEDED.value,
        OPS.c.acknowledged_at.is_(None),
        OPS.c.result_summary["failed"].as_integer() > 0,
    )
    stmt = select(Operation).where(or_(OPS.c.state.in_([s.value for s in attention]), partial))
    if principal is not None:
        stmt = stmt.where(OPS.c.principal == principal)
    stmt = stmt.order_by(OPS.c.updated_at, OPS.c.id).limit(limit)
    return list((await session.execute(stmt)).scalars())


async def count_by_state(session: AsyncSession) -> dict[str, int]:
    rows = await session.execute(select(OPS.c.state, func.count()).group_by(OPS.c.state))
    return {state: n for state, n in rows.all()}


async def insert_result_items(session: AsyncSession, op_id: str, items: list[Any]) -> None:
    if not items:
        return
    await session.execute(
        ITEMS.insert(),
        [{"operation_id": op_id, "position": i, "item": item} for i, item in enumerate(items)],
    )


async def result_items(
    session: AsyncSession, op_id: str, *, after: int, limit: int
) -> list[ResultItem]:
    stmt = (
        select(ResultItem)
        .where(ITEMS.c.operation_id == op_id, ITEMS.c.position > after)
        .order_by(ITEMS.c.position)
        .limit(limit)
    )
    return list((await session.execute(stmt)).scalars())


async def next_due_at(session: AsyncSession) -> datetime | None:
    """When the earliest scheduled operation is due (the due index answers it)."""
    value: datetime | None = (
        await session.execute(select(func.min(OPS.c.next_poll_at)))
    ).scalar_one_or_none()
    return value
