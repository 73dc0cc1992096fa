"""Agent API routes for operations. Thin: parse, call the service or repository, present."""

from __future__ import annotations

from typing import Annotated, Any, get_args

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import JSONResponse

from app.auth import deps
from app.auth.deps import principal
from app.core import json_guard, text
from app.core.context import AppContext
from app.core.errors import ApiError
from app.core.json_body import StrictJsonRoute
from app.operations import cursors, service
from app.operations import repository as repo
from app.operations.models import Operation
from app.operations.presenter import agent_status, iso, to_body
from app.operations.schemas import (
    CreateOperationRequest,
    ErrorBody,
    HistoryItem,
    HistoryList,
    OperationBody,
    OperationList,
)
from app.operations.states import NEEDS_ATTENTION, STATES_OF, TERMINAL, AgentStatus, State

router = APIRouter(prefix="/v1", tags=["operations"], route_class=StrictJsonRoute)
Principal = Annotated[str, Depends(principal)]  # the caller's name
Caller = Annotated[deps.Principal, Depends(deps.caller)]  # name and role
Operator = Annotated[deps.Principal, Depends(deps.operator)]  # 403 unless operator/admin
ERRORS: dict[int | str, dict[str, Any]] = {
    c: {"model": ErrorBody} for c in (400, 401, 404, 409, 413, 422)
}
FORBIDDEN: dict[int | str, dict[str, Any]] = {403: {"model": ErrorBody}}
DONE_STATES = frozenset(s.value for s in TERMINAL | NEEDS_ATTENTION)
MAX_PAGE = 200
MAX_ID_CHARS = 100  # operation ids are "op_" + a 26-character ULID
STATUSES: tuple[str, ...] = get_args(OperationBody.model_fields["status"].annotation)
STATES: tuple[str, ...] = tuple(s.value for s in State)
LABEL = r"^([^\x00=]*=[^\x00]*)?$"  # empty: no filter


def _one_of(values: tuple[str, ...]) -> dict[str, Any]:
    """Query() arguments that document the allowed values; the handler answers its own 422."""
    return {"json_schema_extra": {"enum": list(values)}}


def _pattern(pattern: str) -> dict[str, Any]:
    """Query() arguments that document a pattern; the handler checks it (invalid_value)."""
    return {"json_schema_extra": {"pattern": pattern}}


def context_of(request: Request) -> AppContext:
    return request.app.state.ctx  # type: ignore[no-any-return]


async def load(ctx: AppContext, op_id: str, who: deps.Principal) -> Operation:
    """The operation if the caller may see it (its own; any for operators and admins);
    another caller's id answers 404 to an agent, and so does an id no operation can have
    (too long, NUL, unencodable), without reaching the database."""
    op = None
    if len(op_id) <= MAX_ID_CHARS and text.problem(op_id) is None:
        async with ctx.db.read() as session:
            op = await repo.get(session, op_id)
    if op is None or not who.may_see(op.principal):
        shown = op_id if len(op_id) <= MAX_ID_CHARS else op_id[:MAX_ID_CHARS] + "..."
        raise ApiError(404, "operation_not_found", f"No operation {shown!r} for this caller.")
    return op


def body_json(op: Operation, ctx: AppContext, **kw: Any) -> dict[str, Any]:
    return to_body(op, ctx.now(), **kw).model_dump(mode="json")


# Read from the request, not declared with Header(): declared required, a missing key
# would be FastAPI's 422; the contract is 400 idempotency_key_required with advice.
IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": True,
    "description": "A unique key you choose for this logical operation; reuse it on retries. "
    "Missing: 400 idempotency_key_required.",
    "schema": {
        "type": "string",
        "minLength": 1,
        "maxLength": service.MAX_KEY_LENGTH,
        "pattern": r"^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$",
    },
}


@router.post(
    "/operations",
    operation_id="createOperation",
    status_code=202,
    response_model=OperationBody,
    responses={200: {"model": OperationBody}, **ERRORS},
    openapi_extra={"parameters": [IDEMPOTENCY_KEY]},
)
async def create_operation(
    req: CreateOperationRequest, request: Request, who: Principal
) -> JSONResponse:
    """Start an operation; replays with the same key and body return the same operation."""
    ctx = context_of(request)
    key = request.headers.get("idempotency-key")
    op, replayed = await service.create(ctx, who, key, req)
    headers = {"Location": f"/v1/operations/{op.id}"}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return JSONResponse(body_json(op, ctx), status_code=200 if replayed else 202, headers=headers)


@router.get(
    "/operations", operation_id="listOperations", response_model=OperationList, responses=ERRORS
)
async def list_operations(
    request: Request,
    who: Caller,
    status: Annotated[str | None, Query(description="agent status", **_one_of(STATUSES))] = None,
    state: Annotated[str | None, Query(description="local state", **_one_of(STATES))] = None,
    provider: Annotated[str | None, Query(**_pattern(json_guard.NO_NUL))] = None,
    in_flight: bool | None = None,
    trace_id: Annotated[str | None, Query(**_pattern(json_guard.NO_NUL))] = None,
    label: Annotated[str | None, Query(description="key=value", **_pattern(LABEL))] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    cursor: Annotated[
        str | None, Query(description="next_cursor of the previous page, as returned")
    ] = None,
) -> OperationList:
    """Newest first, cursor-paginated."""
    ctx = context_of(request)
    flt = build_filter(
        who.owner_filter,
        status=status,
        state=state,
        provider=provider,
        trace_id=trace_id,
        label=label,
        in_flight=in_flight,
    )
    page, next_cursor = await list_page(ctx, flt, status=status, limit=limit, cursor=cursor)
    now = ctx.now()
    return OperationList(items=[to_body(o, now) for o in page], next_cursor=next_cursor)


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
            raise ApiError(422, "unknown_state", f"No state {state!r}.")
        states = (state,)
    if status:
        states = states_for_status(status, states)
    label_kv = None
    if label:
        if "=" not in label:
            raise ApiError(422, "invalid_label", "The label filter must be key=value.")
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
    async with ctx.db.read() as session:
        ops = await repo.list_operations(
            session, flt, limit=limit + 1, before=before, done_states=DONE_STATES
        )
    next_cursor = cursors.encode_list_cursor(ops[limit - 1]) if len(ops) > limit else None
    page = ops[:limit]
    if status:  # e.g. succeeded vs completed_with_errors share one state
        page = [o for o in page if agent_status(o) == status]
    return page, next_cursor


def states_for_status(status: str, states: tuple[str, ...]) -> tuple[str, ...]:
    known = {s.value: s for s in AgentStatus}
    if status not in known:
        raise ApiError(422, "unknown_status", f"No status {status!r}.", {"known": sorted(known)})
    allowed = STATES_OF[known[status]]
    names = tuple(s.value for s in allowed)
    return tuple(s for s in states if s in names) if states else names


@router.get(
    "/operations/{op_id}",
    operation_id="getOperation",
    response_model=OperationBody,
    responses=ERRORS,
)
async def get_operation(op_id: str, request: Request, who: Caller) -> dict[str, Any]:
    ctx = context_of(request)
    return body_json(await load(ctx, op_id, who), ctx)


@router.get(
    "/operations/{op_id}/history",
    operation_id="getOperationHistory",
    response_model=HistoryList,
    responses=ERRORS,
)
async def get_history(op_id: str, request: Request, who: Caller) -> dict[str, Any]:
    ctx = context_of(request)
    await load(ctx, op_id, who)
    async with ctx.db.read() as session:
        rows = await repo.history(session, op_id)
    listed = HistoryList(
        operation_id=op_id,
        items=[
            HistoryItem(
                id=r.id or 0,
                at=iso(r.at) or "",
                kind=r.kind,
                actor=r.actor,
                from_state=r.from_state,
                to_state=r.to_state,
                cause=r.cause,
                data=r.data,
            )
            for r in rows
        ],
    )
    return text.degrade(listed.model_dump(mode="json"))  # type: ignore[no-any-return]


@router.get("/healthz", operation_id="health", include_in_schema=False)  # under /v1
async def health() -> Response:
    return Response('{"ok": true}', media_type="application/json")
