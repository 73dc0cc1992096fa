"""Routes that change what happens to an operation: cancel, the attention inbox, resolve."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from app.core.errors import ApiError
from app.core.json_body import StrictJsonRoute
from app.core.json_guard import NO_NUL
from app.operations import attention, cancellation, error_docs
from app.operations.endpoints import (
    ERRORS,
    Caller,
    Operator,
    attach_operation,
    body_json,
    engine_of,
    load,
    present,
)
from app.operations.schemas import OperationBody

router = APIRouter(prefix="/v1", tags=["operations"], route_class=StrictJsonRoute)


class CancelRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(default="", max_length=cancellation.MAX_REASON, pattern=NO_NUL)


@router.post(
    "/operations/{op_id}/cancel",
    operation_id="cancelOperation",
    status_code=202,
    response_model=OperationBody,
    responses={**ERRORS, **error_docs.responses("operation_done")},
)
async def cancel_operation(
    op_id: str, request: Request, who: Caller, req: CancelRequest | None = None
) -> JSONResponse:
    """Record the intent to cancel; 202 and NOT confirmed until the provider says so."""
    engine = engine_of(request)
    op = await load(engine, op_id, who)
    try:
        op = await cancellation.request_cancel(
            engine, op, who.name, (req or CancelRequest()).reason
        )
    except ApiError as err:  # e.g. 409 operation_done: say where it stands and what next
        await attach_operation(err, engine, op_id, who)
        raise
    return JSONResponse(body_json(op, engine), status_code=202)


class AttentionItem(BaseModel):
    why: str
    operation: OperationBody


class AttentionList(BaseModel):
    items: list[AttentionItem]


@router.get(
    "/attention",
    operation_id="listAttention",
    response_model=AttentionList,
    responses=error_docs.responses(*error_docs.COMMON),
)
async def list_attention(
    request: Request, who: Caller, limit: Annotated[int, Query(ge=1, le=200)] = 50
) -> AttentionList:
    """Operations that need a human, oldest first, each with why."""
    engine = engine_of(request)
    async with engine.db.transaction() as session:
        ops = await attention.inbox(session, principal=who.owner_filter, limit=limit)
    now = engine.now()
    return AttentionList(
        items=[
            AttentionItem(why=attention.why(o) or "", operation=present(o, engine, now))
            for o in ops
        ]
    )


@router.post(
    "/operations/{op_id}/resolve",
    operation_id="resolveOperation",
    response_model=OperationBody,
    responses={
        **ERRORS,
        **error_docs.responses(
            *error_docs.BY_ID,
            "forbidden",
            "not_needing_attention",
            "remote_job_unknown",
            "decision_not_allowed",
            "operation_changed",
            "nothing_to_acknowledge",
            "remote_job_id_required",
            "result_deadline_required",
            "invalid_value",
        ),
    },
)
async def resolve_operation(
    op_id: str, req: attention.ResolveRequest, request: Request, who: Operator
) -> dict[str, Any]:
    """An operator's recorded decision on an operation that needs attention (operator or
    admin key; an agent gets 403)."""
    engine = engine_of(request)
    op = await load(engine, op_id, who)
    try:
        op = await attention.resolve(engine, op, who.name, req)
    except ApiError as err:  # a decision that does not fit: the body says where it stands
        await attach_operation(err, engine, op_id, who)
        raise
    return body_json(await load(engine, op_id, who), engine)
