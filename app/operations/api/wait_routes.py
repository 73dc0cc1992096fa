"""Server-side waiting: hold the request until the operation is done, or stream its events.

The agent makes ONE call instead of polling in its reasoning loop. Waiters sleep on
an in-process notification and re-read at a bounded interval, so work finished by
another process is seen too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from sse_starlette.sse import EventSourceResponse
from starlette.types import Receive, Scope, Send

from app.core.obs import telemetry
from app.operations import repository as repo
from app.operations.api import error_docs
from app.operations.api.endpoints import ERRORS, Caller, body_json, context_of, fresh_body_json
from app.operations.api.holds import HoldLimits
from app.operations.contract import cursors
from app.operations.contract.presenter import iso
from app.operations.contract.schemas import OperationBody
from app.operations.domain.states import is_done
from app.operations.services.queries import get as load

router = APIRouter(prefix="/v1", tags=["operations"])

REREAD_SECONDS = 1.0  # a waiter re-reads at least this often (work done by other processes)


@router.get(
    "/operations/{op_id}/wait",
    operation_id="waitOperation",
    response_model=OperationBody,
    responses={**ERRORS, **error_docs.responses("too_many_held")},
)
async def wait_operation(
    op_id: str,
    request: Request,
    who: Caller,
    timeout: Annotated[float | None, Query(ge=0, description="seconds to wait")] = None,
) -> dict[str, Any]:
    """Block until done or `timeout`; `outcome` says which."""
    ctx = context_of(request)
    settings = ctx.settings
    limit = settings.wait_default_seconds if timeout is None else timeout
    limit = min(limit, settings.wait_max_seconds)
    op = await load(ctx, op_id, who)
    if not is_done(op.state) and limit > 0:
        release = holds_of(request).acquire(who.name)
        try:
            op = await request.app.state.waits.wait(op_id, limit, read=op) or op
        finally:
            release()
        if not is_done(op.state):  # timed out: the shared snapshot may lag observations
            op = await load(ctx, op_id, who)
    return await fresh_body_json(op, ctx, waited=True)


def holds_of(request: Request) -> HoldLimits:
    return request.app.state.holds  # type: ignore[no-any-return]


ERROR_BODY_REF = "#/components/schemas/ErrorBody"
SSE_EVENT = {  # one event: `data` is JSON text (a history row; the operation body on `done`)
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "history row id; send as Last-Event-ID"},
        "event": {"type": "string", "description": "history kind, or `done`"},
        "data": {"type": "string"},
    },
    "required": ["event", "data"],
}


SSE_EXAMPLE = (
    'id: 41\nevent: transition\ndata: {"kind": "transition", "from_state": '
    '"observing", "to_state": "result_collecting", ...}\n\n'
    'event: done\ndata: {"operation_id": "op_...", "done": true, '
    '"outcome": "succeeded", ...}\n\n'
)


class _EventStream(Response):
    """Names the media type of the events route in the OpenAPI document."""

    media_type = "text/event-stream"


# Read from the request, not declared with Header(): an optional header would be
# documented as nullable, and "null" is not an event id.
LAST_EVENT_ID = {
    "name": "Last-Event-ID",
    "in": "header",
    "required": False,
    "description": "The id of the last event received, to resume after it.",
    "schema": {"type": "string", "pattern": r"^(|0|[1-9][0-9]{0,17})$"},  # empty: from the start
}


@router.get(
    "/operations/{op_id}/events",
    operation_id="streamOperationEvents",
    response_class=_EventStream,
    responses={
        200: {
            "description": "One event per history row; the last, `done`, carries the "
            "operation body (with `outcome`) as its data.",
            "content": {"text/event-stream": {"schema": SSE_EVENT, "example": SSE_EXAMPLE}},
        },
        **{  # errors are JSON even though the stream is not
            code: {
                "description": entry["description"],
                "content": {
                    "application/json": {
                        "schema": {"$ref": ERROR_BODY_REF},
                        **entry["content"]["application/json"],
                    }
                },
            }
            for code, entry in {**ERRORS, **error_docs.responses("too_many_held")}.items()
        },
    },
    openapi_extra={"parameters": [LAST_EVENT_ID]},
)
async def stream_events(op_id: str, request: Request, who: Caller) -> EventSourceResponse:
    """One SSE event per history row (transition, observation, exchange) until done."""
    ctx = context_of(request)
    await load(ctx, op_id, who)
    last_event_id = request.headers.get("last-event-id")
    after = cursors.decode_event_id(last_event_id) if last_event_id else 0
    release = holds_of(request).acquire(who.name)

    async def events() -> AsyncIterator[dict[str, Any]]:
        nonlocal after
        while True:
            async with ctx.db.read() as txn:
                rows = await repo.history(txn, op_id, after=after)
                op = await repo.get(txn, op_id)
            for r in rows:
                after = r.id or after
                yield {
                    "id": str(r.id),
                    "event": r.kind,
                    "data": _json(
                        {
                            "at": iso(r.at),  # Z, like /history
                            "kind": r.kind,
                            "actor": r.actor,
                            "from_state": r.from_state,
                            "to_state": r.to_state,
                            "cause": r.cause,
                        }
                    ),
                }
            if op is None or is_done(op.state):
                if op is not None:
                    yield {"event": "done", "data": _json(body_json(op, ctx))}
                return
            if await request.is_disconnected():
                return
            await ctx.notifier.wait(op_id, REREAD_SECONDS)

    return _HeldStream(events(), release)


class _HeldStream(EventSourceResponse):
    """An event stream that gives its hold back however it ends (done, client gone,
    shutdown), and is counted while it runs."""

    def __init__(self, content: AsyncIterator[dict[str, Any]], release: Callable[[], None]):
        super().__init__(content)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        telemetry.EVENT_STREAMS.inc()
        try:
            await super().__call__(scope, receive, send)
        finally:
            telemetry.EVENT_STREAMS.dec()
            self._release()


def _json(obj: Any) -> str:
    import json

    return json.dumps(obj, default=str)
