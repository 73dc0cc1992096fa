"""The collected result, and the bounded pages of failed items of a partial result."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from app.core.http.errors import ApiError
from app.core.text import degrade
from app.operations import repository as repo
from app.operations.api import error_docs
from app.operations.api.endpoints import ERRORS, Caller, body_json, context_of, present
from app.operations.context import AppContext
from app.operations.contract import cursors
from app.operations.contract.counted import failed_with_output, has_output
from app.operations.contract.presenter import agent_status
from app.operations.contract.schemas import ResultBody, ResultSummary
from app.operations.domain.operation import Operation
from app.operations.domain.states import State
from app.operations.services.queries import get as load

router = APIRouter(prefix="/v1", tags=["operations"])
MAX_ERRORS_PAGE = 200
_POSITION = {"json_schema_extra": {"pattern": r"^(0|[1-9][0-9]{0,8})$"}}  # checked by cursors


@router.get(
    "/operations/{op_id}/result",
    operation_id="getOperationResult",
    response_model=None,
    responses={
        200: {"model": ResultBody, "description": "The result, or a kept partial output"},
        **ERRORS,
        **error_docs.responses("result_not_available"),
    },
)
async def get_result(op_id: str, request: Request, who: Caller) -> Response:
    """The result, only once collected and checked; otherwise 409 saying why."""
    ctx = context_of(request)
    op = await load(ctx, op_id, who)
    if not kept_result(op):
        body = present(op, ctx, ctx.now())
        err = ApiError(
            409,
            "result_not_available",
            f"No result: the operation is {op.state} ({body.status}).",  # + its message
            {"state": op.state, "status": body.status, "done": body.done},
        )
        err.operation = body_json(op, ctx)
        raise err
    summary = op.result_summary if isinstance(op.result_summary, dict) else None
    payload = {
        "operation_id": op.id,
        "status": agent_status(op),
        "message": present(op, ctx, ctx.now()).message,
        "result": op.result,
        "size": op.result_size,
        "sha256": op.result_sha256,
        "result_summary": ResultSummary.model_validate(summary).model_dump() if summary else None,
    }
    if op.result_ref:  # a large stored result: read, parse and encode it off the event loop
        text = await asyncio.to_thread(_with_stored_result, ctx, op.result_ref, payload)
    else:
        text = json.dumps(payload)
    return Response(text, media_type="application/json")


def kept_result(op: Operation) -> bool:
    """A result to offer: a succeeded operation's, or the part a cancelled or failed job
    finished first (offered with its own `status`, never as a success)."""
    if op.state == State.SUCCEEDED:
        return True
    if op.state == State.CANCELLED:
        return has_output(op)
    return failed_with_output(op)


def _with_stored_result(ctx: AppContext, ref: str, payload: dict[str, Any]) -> str:
    return json.dumps({**payload, "result": json.loads(ctx.results.get(ref))})


@router.get("/operations/{op_id}/errors", operation_id="getOperationErrors", responses=ERRORS)
async def get_errors(
    op_id: str,
    request: Request,
    who: Caller,
    limit: Annotated[int, Query(ge=1, le=MAX_ERRORS_PAGE)] = 50,
    cursor: Annotated[
        str | None,
        Query(description="next_cursor of the previous page", **_POSITION),
    ] = None,
) -> dict[str, Any]:
    """Failed items, `limit` at a time; `next_cursor` is null on the last page."""
    ctx = context_of(request)
    await load(ctx, op_id, who)
    after = -1 if cursor is None else cursors.decode_position(cursor)
    async with ctx.db.read() as txn:
        rows = await repo.result_items(txn, op_id, after=after, limit=limit + 1)
    page = rows[:limit]
    return degrade(  # type: ignore[no-any-return]
        {
            "operation_id": op_id,
            "items": [{"position": r.position, "item": r.item} for r in page],
            "next_cursor": str(page[-1].position) if len(rows) > limit else None,
        }
    )
