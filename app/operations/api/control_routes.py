"""Routes that change what happens to an operation: cancel, the attention inbox, resolve."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from app.core.http.errors import ApiError, DomainError
from app.core.http.json_body import StrictJsonRoute
from app.operations.api import error_docs
from app.operations.api.endpoints import (
    ERRORS,
    Caller,
    Operator,
    attach_operation,
    body_json,
    context_of,
    fresh_body_json,
    present,
)
from app.operations.contract.schemas import (
    AttentionItem,
    AttentionList,
    CancelRequest,
    OperationBody,
    ResolveRequest,
)
from app.operations.services import attention, cancellation, estimates, queries
from app.operations.services.queries import get as load

router = APIRouter(prefix="/v1", tags=["operations"], route_class=StrictJsonRoute)


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
    ctx = context_of(request)
    op = await load(ctx, op_id, who)
    try:
        op = await cancellation.request_cancel(ctx, op, who, (req or CancelRequest()).reason)
    except (ApiError, DomainError) as err:  # e.g. 409 operation_done: where it stands, what next
        await attach_operation(err, ctx, op_id, who)
        raise
    return JSONResponse(await fresh_body_json(op, ctx), status_code=202)


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
    ctx = context_of(request)
    inbox = await queries.attention_inbox(ctx, who, limit=limit)
    await estimates.warm(ctx, [o for o, _ in inbox])
    now = ctx.now()
    return AttentionList(
        items=[AttentionItem(why=why, operation=present(o, ctx, now)) for o, why in inbox]
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
            "remote_job_bound",
            "remote_job_unverified",
            "remote_job_mismatch",
            "remote_job_unproven",
            "invalid_value",
        ),
    },
)
async def resolve_operation(
    op_id: str, req: ResolveRequest, request: Request, who: Operator
) -> dict[str, Any]:
    """An operator's recorded decision on an operation that needs attention (operator or
    admin key; an agent gets 403)."""
    ctx = context_of(request)
    op = await load(ctx, op_id, who)
    try:
        done = await attention.resolve(ctx, op, who.name, req)
    except (ApiError, DomainError) as err:  # a decision that does not fit: where it stands
        await attach_operation(err, ctx, op_id, who)
        raise
    body = body_json(await load(ctx, op_id, who), ctx)
    if done.forced:  # said in the answer to the one who forced it (and in the history)
        body["message"] = f"{done.forced} {body['message']}"
    return body
