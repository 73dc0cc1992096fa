"""Agent API routes for operations. Thin: parse, call the service or repository, present."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, get_args

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import JSONResponse

from app.auth import deps
from app.auth.deps import principal
from app.core.http import json_guard
from app.core.http.errors import ApiError, DomainError
from app.core.http.json_body import StrictJsonRoute
from app.operations.api import error_docs
from app.operations.context import AppContext
from app.operations.contract import cursors, ids
from app.operations.contract.presenter import history_json, to_body
from app.operations.contract.schemas import (
    CreateOperationRequest,
    HistoryList,
    OperationBody,
    OperationList,
    Whoami,
)
from app.operations.domain.operation import Operation
from app.operations.services import estimates, intake, queries
from app.operations.services.queries import STATES
from app.operations.services.queries import get as load

router = APIRouter(prefix="/v1", tags=["operations"], route_class=StrictJsonRoute)
CallerName = Annotated[str, Depends(principal)]  # the caller's name (deps.Principal: name+role)
Caller = Annotated[deps.Principal, Depends(deps.caller)]  # name and role
Operator = Annotated[deps.Principal, Depends(deps.operator)]  # 403 unless operator/admin
ERRORS = error_docs.responses(*error_docs.BY_ID, "invalid_value")  # a route by operation id
MAX_PAGE = 200
STATUSES: tuple[str, ...] = get_args(OperationBody.model_fields["status"].annotation)
LABEL = r"^[^\x00=]*=[^\x00]*$"


def _one_of(values: tuple[str, ...]) -> dict[str, Any]:
    """Query() arguments that document the allowed values; the handler answers its own 422."""
    return {"json_schema_extra": {"enum": list(values)}}


def _pattern(pattern: str) -> dict[str, Any]:
    """Query() arguments that document a pattern; the handler checks it (invalid_value)."""
    return {"json_schema_extra": {"pattern": pattern}}


def context_of(request: Request) -> AppContext:
    return request.app.state.ctx  # type: ignore[no-any-return]


def body_json(op: Operation, ctx: AppContext, *, waited: bool = False) -> dict[str, Any]:
    """The operation's body as JSON (the one renderer, `presenter.to_body`), with the
    estimate as cached (`fresh_body_json` reads it first when stale)."""
    return present(op, ctx, ctx.now(), waited=waited).model_dump(mode="json")


async def fresh_body_json(
    op: Operation, ctx: AppContext, *, waited: bool = False
) -> dict[str, Any]:
    """`body_json` after reading the estimate of its provider and kind, when stale."""
    await estimates.warm(ctx, [op])
    return body_json(op, ctx, waited=waited)


def present(
    op: Operation, ctx: AppContext, now: datetime, *, waited: bool = False
) -> OperationBody:
    """`to_body` with this gateway's settings (MCP tools named only when MCP is on) and
    the provider's polling cap: how late, at most, the gateway learns the job's end."""
    return to_body(
        op,
        now,
        waited=waited,
        mcp=ctx.settings.mcp,
        notice_s=notice_seconds(op, ctx),
        estimate=estimates.estimate_for(ctx, op),
    )


def notice_seconds(op: Operation, ctx: AppContext) -> float | None:
    """The longest delay between two status reads of this operation's job (scaled)."""
    profile = ctx.profiles.get(op.provider)
    return ctx.settings.scaled(profile.polling.max_seconds) if profile is not None else None


async def attach_operation(
    err: ApiError | DomainError, ctx: AppContext, op_id: str, who: deps.Principal
) -> None:
    """Contract v2: an error about an existing operation carries its current body."""
    if err.operation is not None or err.code in ("operation_not_found", "operation_pruned"):
        return
    try:
        err.operation = body_json(await load(ctx, op_id, who), ctx)
    except (ApiError, DomainError):  # gone or hidden: the error alone
        return


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
        "maxLength": intake.MAX_KEY_LENGTH,
        "pattern": ids.IDEMPOTENCY_KEY,
    },
}


TRACEPARENT = {
    "name": "traceparent",
    "in": "header",
    "required": False,
    "description": "W3C Trace Context: the operation's trace_id becomes tr_<trace-id> and "
    "provider calls carry a traceparent in the same trace. Anything that is not a valid "
    "traceparent (wrong form or length) is ignored, never refused.",
    "schema": {"type": "string"},
}


@router.post(
    "/operations",
    operation_id="createOperation",
    status_code=202,
    response_model=OperationBody,
    responses={
        200: {"model": OperationBody, "description": "A replay: the same key and request."},
        **error_docs.responses(
            *error_docs.COMMON,
            "idempotency_key_required",
            "idempotency_key_invalid",
            "idempotency_key_reused",
            "operation_pruned",
            "unknown_provider",
            "unknown_kind",
            "provider_unavailable",
            "gateway_option_in_input",
            "callback_url_forbidden",
            "invalid_value",
            "policy_in_flight_limit",
            "policy_rate_limit",
            "policy_budget_exhausted",
        ),
    },
    openapi_extra={"parameters": [IDEMPOTENCY_KEY, TRACEPARENT]},
)
async def create_operation(
    req: CreateOperationRequest, request: Request, who: Caller
) -> JSONResponse:
    """Start an operation; replays with the same key and body return the same operation.
    The policy (docs/policy.md) may refuse a new create (429, nothing recorded) or hold it
    for an operator's approval (`awaiting_approval`, nothing sent)."""
    ctx = context_of(request)
    key = request.headers.get("idempotency-key")
    op, replayed = await intake.create(
        ctx, who.name, key, req, request.headers.get("traceparent"), role=who.role.value
    )
    headers = {"Location": f"/v1/operations/{op.id}"}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    body = await fresh_body_json(op, ctx)
    return JSONResponse(body, status_code=200 if replayed else 202, headers=headers)


@router.get(
    "/operations",
    operation_id="listOperations",
    response_model=OperationList,
    responses=error_docs.responses(
        *error_docs.COMMON,
        "invalid_cursor",
        "unknown_state",
        "unknown_status",
        "invalid_label",
        "invalid_value",
    ),
)
async def list_operations(
    request: Request,
    who: Caller,
    status: Annotated[
        str | None, Query(description="agent status", min_length=1, **_one_of(STATUSES))
    ] = None,
    state: Annotated[
        str | None, Query(description="local state", min_length=1, **_one_of(STATES))
    ] = None,
    provider: Annotated[str | None, Query(min_length=1, **_pattern(json_guard.NO_NUL))] = None,
    in_flight: bool | None = None,
    trace_id: Annotated[str | None, Query(min_length=1, **_pattern(json_guard.NO_NUL))] = None,
    label: Annotated[
        str | None, Query(description="key=value", min_length=1, **_pattern(LABEL))
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    cursor: Annotated[
        str | None,
        Query(
            description="next_cursor of the previous page, as returned (any other is 400 "
            "invalid_cursor)",
            min_length=1,
            **_pattern(cursors.LIST_CURSOR),
        ),
    ] = None,
) -> OperationList:
    """Newest first, cursor-paginated."""
    ctx = context_of(request)
    flt = queries.build_filter(
        who.owner_filter,
        status=status,
        state=state,
        provider=provider,
        trace_id=trace_id,
        label=label,
        in_flight=in_flight,
    )
    page, next_cursor = await queries.list_page(ctx, flt, status=status, limit=limit, cursor=cursor)
    await estimates.warm(ctx, page)
    now = ctx.now()
    return OperationList(items=[present(o, ctx, now) for o in page], next_cursor=next_cursor)


@router.get(
    "/operations/{op_id}",
    operation_id="getOperation",
    response_model=OperationBody,
    responses=ERRORS,
)
async def get_operation(op_id: str, request: Request, who: Caller) -> dict[str, Any]:
    ctx = context_of(request)
    return await fresh_body_json(await load(ctx, op_id, who), ctx)


@router.get(
    "/operations/{op_id}/history",
    operation_id="getOperationHistory",
    response_model=HistoryList,
    responses=ERRORS,
)
async def get_history(op_id: str, request: Request, who: Caller) -> dict[str, Any]:
    ctx = context_of(request)
    return history_json(op_id, await queries.history(ctx, op_id, who))


@router.get(
    "/whoami",
    operation_id="whoami",
    response_model=Whoami,
    responses=error_docs.responses(*error_docs.COMMON),
)
async def whoami(who: Caller) -> Whoami:
    """The caller behind the API key, and its role (operators may resolve and see all)."""
    return Whoami(principal=who.name, role=who.role.value, is_operator=who.is_operator)


@router.get("/healthz", operation_id="health", include_in_schema=False)  # under /v1
async def health() -> Response:
    """Liveness; `service` tells jobgate from another server on the port (`make run`)."""
    return Response('{"ok": true, "service": "jobgate"}', media_type="application/json")
