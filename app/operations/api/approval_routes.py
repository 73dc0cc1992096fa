"""Operators' decisions on creates the policy held for approval (docs/policy.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from app.core.http.errors import ApiError, DomainError
from app.core.http.json_body import StrictJsonRoute
from app.operations.api import error_docs
from app.operations.api.endpoints import ERRORS, Operator, attach_operation, body_json, context_of
from app.operations.contract.schemas import ApprovalDecisionRequest, OperationBody
from app.operations.services import approvals
from app.operations.services.queries import get as load

router = APIRouter(prefix="/v1", tags=["operations"], route_class=StrictJsonRoute)
_RESPONSES = {
    **ERRORS,
    **error_docs.responses(
        *error_docs.BY_ID,
        "forbidden",
        "own_operation",
        "not_awaiting_approval",
        "operation_changed",
        "invalid_value",
    ),
}


async def _decide(
    op_id: str, req: ApprovalDecisionRequest, request: Request, who: Any, *, approve: bool
) -> dict[str, Any]:
    ctx = context_of(request)
    op = await load(ctx, op_id, who)
    try:
        await approvals.decide(ctx, op, who, approve=approve, reason=req.reason)
    except (ApiError, DomainError) as err:  # where it stands, beside the refusal
        await attach_operation(err, ctx, op_id, who)
        raise
    return body_json(await load(ctx, op_id, who), ctx)


@router.post(
    "/operations/{op_id}/approve",
    operation_id="approveOperation",
    response_model=OperationBody,
    responses=_RESPONSES,
)
async def approve_operation(
    op_id: str, req: ApprovalDecisionRequest, request: Request, who: Operator
) -> dict[str, Any]:
    """Approve a create held for approval: it is sent as any other create (operator or
    admin key, never the one that created it; an agent gets 403)."""
    return await _decide(op_id, req, request, who, approve=True)


@router.post(
    "/operations/{op_id}/deny",
    operation_id="denyOperation",
    response_model=OperationBody,
    responses=_RESPONSES,
)
async def deny_operation(
    op_id: str, req: ApprovalDecisionRequest, request: Request, who: Operator
) -> dict[str, Any]:
    """Deny a create held for approval: it ends `failed`, never sent (operator or admin
    key, never the one that created it; an agent gets 403)."""
    return await _decide(op_id, req, request, who, approve=False)
