"""Reads: one operation, its history and result items, lists and the inbox."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, bindparam, or_, select
from sqlalchemy.exc import DataError

from app.core.db.txn import Txn
from app.operations.domain.models import HistoryEntry, ResultItem
from app.operations.domain.operation import Operation
from app.operations.domain.states import NEEDS_ATTENTION, AgentStatus, State
from app.operations.repository.tables import (
    HIST,
    ITEMS,
    OPS,
    operation_of,
    operations_of,
    select_operations,
)

# The two reads of every request and step, built once (docs/performance.md); values bound by name.
_GET = select_operations().where(OPS.c.id == bindparam("k_id"))
_BY_KEY = select_operations().where(
    OPS.c.principal == bindparam("k_principal"), OPS.c.idempotency_key == bindparam("k_key")
)


async def _one(
    txn: Txn, stmt: Select[Any], params: dict[str, str] | None = None
) -> Operation | None:
    row = (await txn.execute(stmt, params)).one_or_none()
    return None if row is None else operation_of(row)


async def get(txn: Txn, op_id: str) -> Operation | None:
    return await _one(txn, _GET, {"k_id": op_id})


async def get_by_key(txn: Txn, principal: str, key: str) -> Operation | None:
    return await _one(txn, _BY_KEY, {"k_principal": principal, "k_key": key})


async def get_by_remote_job(txn: Txn, provider: str, remote_job_id: str) -> Operation | None:
    """The operation that owns this remote job (oldest first if, wrongly, several do)."""
    stmt = (
        select_operations()
        .where(OPS.c.provider == provider, OPS.c.remote_job_id == remote_job_id)
        .order_by(OPS.c.created_at)
        .limit(1)
    )
    return await _one(txn, stmt)


async def job_owner(
    txn: Txn, provider: str, remote_job_id: str, *, other_than: str
) -> Operation | None:
    """Another operation already bound to this remote job, if any (oldest first)."""
    stmt = (
        select_operations()
        .where(
            OPS.c.provider == provider,
            OPS.c.remote_job_id == remote_job_id,
            OPS.c.id != other_than,
        )
        .order_by(OPS.c.created_at)
        .limit(1)
    )
    return await _one(txn, stmt)


async def history(txn: Txn, op_id: str, *, after: int = 0) -> list[HistoryEntry]:
    """History rows in order; `after` skips those already seen (SSE resumes by id)."""
    stmt = (
        select(HistoryEntry)
        .where(HIST.c.operation_id == op_id, HIST.c.id > after)
        .order_by(HIST.c.id)
    )
    return list((await txn.execute(stmt)).scalars())


RESEND_ROW = "create_resend"  # history kind: a create announced before it is sent again
REPLAY_ROW = "create_replay"  # history kind: a token replay announced before it is sent
_PENDING = State.CREATE_PENDING.value


@dataclass(frozen=True)
class CreateTally:
    """What history says of one operation's creates (docs/single-create.md).

    `sent`: create exchanges that were built and handed to the wire (a local refusal has
    no method); `proven`: creates proven to have made no job (each is a `create_pending ->
    create_pending` transition whose evidence carries the proof); `resends`: creates
    announced (a `create_resend` row, committed under the lease) before being sent again;
    `replays`: token replays announced (a `create_replay` row) before being sent.
    """

    sent: int = 0
    proven: int = 0
    resends: int = 0
    unsent: int = 0  # of the proven: creates whose request never left
    last_proof: str | None = None
    replays: int = 0

    @property
    def all_proven(self) -> bool:
        """Every create that may have been sent (the first, and each one announced since)
        is proven to have made no job: only then may the create go again."""
        return self.proven == self.resends + 1

    @property
    def may_have_made_a_job(self) -> int:
        """Creates that may have started a job: every one sent or announced, less the proven."""
        return max(self.sent, self.resends + 1) - self.proven


async def create_tally(txn: Txn, op_id: str) -> CreateTally:
    """Count the operation's creates from its history (see `CreateTally`)."""
    stmt = (
        select(HIST.c.kind, HIST.c.data)
        .where(
            HIST.c.operation_id == op_id,
            or_(
                and_(HIST.c.kind == "exchange", HIST.c.cause.like("create %")),
                HIST.c.kind.in_((RESEND_ROW, REPLAY_ROW)),
                and_(
                    HIST.c.kind == "transition",
                    HIST.c.from_state == _PENDING,
                    HIST.c.to_state == _PENDING,
                ),
            ),
        )
        .order_by(HIST.c.id)
    )
    sent = proven = resends = unsent = replays = 0
    last: str | None = None
    for kind, data in (await txn.execute(stmt)).all():
        d = data if isinstance(data, dict) else {}
        if kind == "exchange":
            sent += d.get("operation") == "create" and bool(d.get("method"))
        elif kind == RESEND_ROW:
            resends += 1
        elif kind == REPLAY_ROW:
            replays += 1
        else:
            found = d.get("evidence_data")
            proof: dict[str, Any] = found if isinstance(found, dict) else {}
            proven += 1
            unsent += bool(proof.get("not_sent"))
            last = str(proof.get("proof") or "") or last
    return CreateTally(sent, proven, resends, unsent, last, replays)


@dataclass(frozen=True)
class ListFilter:
    principal: str | None = None
    states: tuple[str, ...] = ()
    provider: str | None = None
    trace_id: str | None = None
    label: tuple[str, str] | None = None
    in_flight: bool | None = None


async def list_operations(
    txn: Txn,
    flt: ListFilter,
    *,
    limit: int,
    before: tuple[datetime, str] | None,
    done_states: frozenset[str],
) -> list[Operation]:
    """Newest first; keyset pagination on (created_at, id)."""
    stmt = select_operations()
    if flt.principal is not None:
        stmt = stmt.where(OPS.c.principal == flt.principal)
    if flt.states:
        stmt = stmt.where(OPS.c.state.in_(flt.states))
    if flt.provider:
        stmt = stmt.where(OPS.c.provider == flt.provider)
    if flt.trace_id:
        stmt = stmt.where(OPS.c.trace_id == flt.trace_id)
    if flt.in_flight is True:
        # The open states by name, not "NOT IN the done ones": an IN reads the few rows
        # in flight off the state index, where NOT IN walked every finished row
        # (docs/performance.md, "Growth").
        stmt = stmt.where(OPS.c.state.in_([s.value for s in State if s.value not in done_states]))
    elif flt.in_flight is False:
        stmt = stmt.where(OPS.c.state.in_(done_states))
    if before is not None:
        ts, op_id = before
        stmt = stmt.where(
            or_(OPS.c.created_at < ts, and_(OPS.c.created_at == ts, OPS.c.id < op_id))
        )
    stmt = stmt.order_by(OPS.c.created_at.desc(), OPS.c.id.desc())
    if flt.label is None:
        return operations_of(await txn.execute(stmt.limit(limit)))
    # JSON operators on both back-ends (json_extract on SQLite, ->> on PostgreSQL).
    key, value = flt.label
    by_label = stmt.where(OPS.c.labels[key].as_string() == value).limit(limit)
    if txn.dialect.name != "postgresql":
        return operations_of(await txn.execute(by_label))
    try:
        async with txn.begin_nested():
            return operations_of(await txn.execute(by_label))
    except DataError:
        # PostgreSQL's ->> refuses rows an older version stored with unencodable text
        # ; only a database holding such rows pays for the scan below.
        return await _scan_labels(txn, stmt, key, value, limit)


async def _scan_labels(
    txn: Txn, stmt: Select[Any], key: str, value: str, limit: int
) -> list[Operation]:
    out: list[Operation] = []
    async for row in await txn.stream(stmt):
        op = operation_of(row)
        if isinstance(op.labels, dict) and str(op.labels.get(key)) == value:
            out.append(op)
            if len(out) >= limit:
                break
    return out


def needs_human() -> ColumnElement[bool]:
    """What the attention inbox holds: needs-attention states, plus partial results
    (succeeded with failed or never-processed items) nobody has acknowledged. The whole
    condition is SQL."""
    partial = and_(
        OPS.c.state == State.SUCCEEDED.value,
        OPS.c.acknowledged_at.is_(None),
        OPS.c.outcome == AgentStatus.COMPLETED_WITH_ERRORS.value,
    )
    return or_(OPS.c.state.in_([s.value for s in NEEDS_ATTENTION]), partial)


async def attention_inbox(txn: Txn, *, principal: str | None, limit: int) -> list[Operation]:
    """Oldest first; the page is exactly `limit` rows at most."""
    stmt = select_operations().where(needs_human())
    if principal is not None:
        stmt = stmt.where(OPS.c.principal == principal)
    stmt = stmt.order_by(OPS.c.updated_at, OPS.c.id).limit(limit)
    return operations_of(await txn.execute(stmt))


async def result_items(txn: Txn, op_id: str, *, after: int, limit: int) -> list[ResultItem]:
    stmt = (
        select(ResultItem)
        .where(ITEMS.c.operation_id == op_id, ITEMS.c.position > after)
        .order_by(ITEMS.c.position)
        .limit(limit)
    )
    return list((await txn.execute(stmt)).scalars())
