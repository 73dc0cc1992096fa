"""Routes that change what happens to an operation: cancel, the attention inbox, resolve."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from app.core.json_body import StrictJsonRoute
from app.operations import attention, cancellation, queries
from app.operations.endpoints import (
    ERRORS,
    FORBIDDEN,
    Caller,
    Operator,
    body_json,
    context_of,
)
from app.operations.presenter import to_body
from app.operations.queries import get as load
from app.operations.schemas import (
    AttentionItem,
    AttentionList,
    CancelRequest,
    OperationBody,
    ResolveRequest,
)

router = APIRouter(prefix="/v1", tags=["operations"], route_class=StrictJsonRoute)


@router.post(
    "/operations/{op_id}/cancel",
    operation_id="cancelOperation",
    status_code=202,
    response_model=OperationBody,
    responses=ERRORS,
)
async def cancel_operation(
    op_id: str, request: Request, who: Caller, req: CancelRequest | None = None
) -> JSONResponse:
    """Record the intent to cancel; 202 and NOT confirmed until the provider says so."""
    ctx = context_of(request)
    op = await load(ctx, op_id, who)
    op = await cancellation.request_cancel(ctx, op, who.name, (req or CancelRequest()).reason)
    return JSONResponse(body_json(op, ctx), status_code=202)


@router.get(
    "/attention", operation_id="listAttention", response_model=AttentionList, responses=ERRORS
)
async def list_attention(
    request: Request, who: Caller, limit: Annotated[int, Query(ge=1, le=200)] = 50
) -> AttentionList:
    """Operations that need a human, oldest first, each with why."""
    ctx = context_of(request)
    inbox = await queries.attention_inbox(ctx, who, limit=limit)
    now = ctx.now()
    return AttentionList(
        items=[AttentionItem(why=why, operation=to_body(o, now)) for o, why in inbox]
    )


@router.post(
    "/operations/{op_id}/resolve",
    operation_id="resolveOperation",
    response_model=OperationBody,
    responses={**ERRORS, **FORBIDDEN},
)
async def resolve_operation(
    op_id: str, req: ResolveRequest, request: Request, who: Operator
) -> dict[str, Any]:
    """An operator's recorded decision on an operation that needs attention (operator or
    admin key; an agent gets 403)."""
    ctx = context_of(request)
    op = await load(ctx, op_id, who)
    op = await attention.resolve(ctx, op, who.name, req)
    return body_json(await load(ctx, op_id, who), ctx)
