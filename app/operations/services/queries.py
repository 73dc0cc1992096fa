"""Reads for the API and the operator views: one set of filter rules, one way to load.

Every list, lookup, history and inbox read goes through here, in a read
transaction; refusals are domain errors (`core.errors`), mapped to HTTP once.
"""

from __future__ import annotations

from app.auth import deps
from app.core import text
from app.core.http import json_guard
from app.core.http.errors import Gone, Invalid, NotFound
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.contract import cursors, pruned
from app.operations.contract.presenter import agent_status
from app.operations.domain.models import HistoryEntry
from app.operations.domain.operation import Operation
from app.operations.domain.states import NEEDS_ATTENTION, STATES_OF, TERMINAL, AgentStatus, State
from app.operations.repository import gate
from app.operations.services import attention, estimates

DONE_STATES = frozenset(s.value for s in TERMINAL | NEEDS_ATTENTION)
MAX_ID_CHARS = 100  # operation ids are "op_" + a 26-character ULID
STATES: tuple[str, ...] = tuple(s.value for s in State)


async def get(ctx: AppContext, op_id: str, who: deps.Principal) -> Operation:
    """The operation if the caller may see it (its own; any for operators and admins);
    another caller's id answers 404 to an agent, and so does an id no operation can have
    (too long, NUL, unencodable), without reaching the database."""
    op = None
    if len(op_id) <= MAX_ID_CHARS and text.problem(op_id) is None:
        async with ctx.db.read() as txn:
            op = await repo.get(txn, op_id)
            tomb = await repo.tombstone_of(txn, None, op_id) if op is None else None
        if tomb is not None and who.may_see(tomb.principal):
            raise Gone("operation_pruned", pruned.message(tomb, replay=False), pruned.details(tomb))
    if op is None or not who.may_see(op.principal):
        shown = op_id if len(op_id) <= MAX_ID_CHARS else op_id[:MAX_ID_CHARS] + "..."
        raise NotFound("operation_not_found", f"No operation {shown!r} for this caller.")
    return op


def build_filter(
    owner: str | None,
    *,
    status: str | None,
    state: str | None,
    provider: str | None,
    trace_id: str | None,
    label: str | None,
    in_flight: bool | None = None,
) -> repo.ListFilter:
    """The list filters of the API and the operator view: one set of rules for both."""
    for name, value in (("provider", provider), ("trace_id", trace_id), ("label", label)):
        json_guard.check_text(value, parameter=name)
    states: tuple[str, ...] = ()
    if state:
        if state not in STATES:
            raise Invalid("unknown_state", f"No state {state!r}.")
        states = (state,)
    if status:
        states = states_for_status(status, states)
    label_kv = None
    if label:
        if "=" not in label:
            raise Invalid("invalid_label", "The label filter must be key=value.")
        key, value = label.split("=", 1)
        label_kv = (key, value)
    return repo.ListFilter(
        principal=owner,
        states=states,
        provider=provider or None,
        trace_id=trace_id or None,
        label=label_kv,
        in_flight=in_flight,
    )


async def list_page(
    ctx: AppContext, flt: repo.ListFilter, *, status: str | None, limit: int, cursor: str | None
) -> tuple[list[Operation], str | None]:
    """One page, newest first, and the cursor of the next (None on the last page)."""
    before = cursors.decode_list_cursor(cursor) if cursor else None
    async with ctx.db.read() as txn:
        ops = await repo.list_operations(
            txn, flt, limit=limit + 1, before=before, done_states=DONE_STATES
        )
    next_cursor = cursors.encode_list_cursor(ops[limit - 1]) if len(ops) > limit else None
    page = ops[:limit]
    if status:  # e.g. succeeded vs completed_with_errors share one state
        page = [o for o in page if agent_status(o) == status]
    return page, next_cursor


def states_for_status(status: str, states: tuple[str, ...]) -> tuple[str, ...]:
    known = {s.value: s for s in AgentStatus}
    if status not in known:
        raise Invalid("unknown_status", f"No status {status!r}.", {"known": sorted(known)})
    allowed = STATES_OF[known[status]]
    names = tuple(s.value for s in allowed)
    return tuple(s for s in states if s in names) if states else names


async def history(ctx: AppContext, op_id: str, who: deps.Principal) -> list[HistoryEntry]:
    """Every history row of an operation the caller may see, oldest first."""
    await get(ctx, op_id, who)
    async with ctx.db.read() as txn:
        return await repo.history(txn, op_id)


async def attention_inbox(
    ctx: AppContext, who: deps.Principal, *, limit: int
) -> list[tuple[Operation, str]]:
    """The inbox the caller may see, oldest first, each with why it needs a human; with
    `JOBGATE_ATTENTION_SLOW`, then the jobs running longer than 90% of similar ones."""
    async with ctx.db.read() as txn:
        ops = await attention.inbox(txn, principal=who.owner_filter, limit=limit)
    found = [(o, attention.why(o) or "") for o in ops]
    if ctx.settings.attention_slow and len(found) < limit:  # then the slow jobs, oldest first
        found += await estimates.slow_jobs(
            ctx, principal=who.owner_filter, limit=limit - len(found)
        )
    return found


async def attention_count(ctx: AppContext, who: deps.Principal, *, cap: int) -> int:
    """How many operations in the caller's inbox: counted in the database for an operator
    (who sees every operation), else the length of the caller's own inbox up to `cap`."""
    async with ctx.db.read() as session:
        if who.owner_filter is None:
            held = await gate.awaiting_count(session)
            return await repo.attention_count(session) + held
        return len(await attention.inbox(session, principal=who.owner_filter, limit=cap))
