"""The MCP tools. Each one is a REST call through `jobgate_client.AsyncClient`.

The server never touches the database or the operation machinery: on the gateway it
calls the same app in-process with the caller's own API key, and over stdio it calls
a gateway by URL, so the same keys, roles and answers apply everywhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, Literal, cast

from mcp.server.context import ServerMiddleware
from mcp.server.extension import Extension
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from app.core.http import json_guard
from app.mcp import replies
from app.mcp.arguments import ArgumentCheck
from app.mcp.outputs import AttentionOut, ErrorsOut, ListOut, OperationOut, ResultOut
from app.operations.contract import ids
from jobgate_client import (
    ApiError,
    AsyncClient,
    AuthError,
    ConflictError,
    Deadlines,
    GatewayUnavailable,
    Operation,
    OperationList,
    UsageError,
    Validation,
)
from jobgate_client.tool import IDEMPOTENCY_KEY_ADVICE

Connect = Callable[[Context[Any, Any]], AsyncClient]  # the client for this tool call
WAIT_CAP_S = 50.0  # one wait_for_operation holds at most this long (hosts time out calls)
WAIT_DEFAULT_S = 30.0
LIST_MAX = 100
MAX_SHOWN_ID = 100  # characters of a refused id repeated back

# The stop rules every tool that answers with an operation repeats (docs/agent-api.md,
# "Three situations, three vocabularies"): a model may read one description only.
STOP_RULES = (
    "Read `done` first. `done: false`: the job is in progress; call wait_for_operation "
    "with the same operation_id (`outcome: timed_out` means only that the wait ended). "
    "`done: true`: `outcome` says how it ended. Report success only when `outcome` is "
    "`succeeded`; `completed_with_errors`, `failed` and `cancelled` are not a success: "
    "report them as they are. `needs_attention` means a human is needed: stop, tell the "
    "user the operation_id and why, and do not retry or start the work again."
)
INSTRUCTIONS = (
    "jobgate runs long provider jobs for you and tells you in plain words where they stand. "
    "At the start of a run call list_operations: work still in flight is listed first. "
    "Start work with start_operation (always with an idempotency_key). " + STOP_RULES
)
START_DESCRIPTION = (
    "Start a long job at a provider through the gateway. It answers at once with the "
    "operation, and `done` may already be true (a provider that refused the request at "
    "once, or answered with the result straight away): read it before waiting. "
    + STOP_RULES
    + " "
    + IDEMPOTENCY_KEY_ADVICE
)

OpId = Annotated[str, Field(min_length=1, max_length=100, description="the operation_id")]
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)


class DeadlinesArg(BaseModel):
    """Seconds from the start: to learn the remote job, to get the result, to cancel."""

    model_config = ConfigDict(extra="forbid")

    create_seconds: float | None = Field(default=None, gt=0)
    result_seconds: float | None = Field(default=None, gt=0)
    cancel_seconds: float | None = Field(default=None, gt=0)


class ValidationArg(BaseModel):
    """Checks the result must pass before it counts as succeeded (beside the profile's)."""

    model_config = ConfigDict(extra="forbid")

    json_schema: dict[str, Any] | None = Field(
        default=None, description="a JSON Schema the result must match"
    )
    max_bytes: int | None = Field(default=None, gt=0, description="the largest result accepted")
    require_counts: bool = Field(default=False, description="item counts must add up")


def _validation(arg: ValidationArg | None) -> Validation | None:
    return cast(Validation, arg.model_dump(exclude_none=True)) if arg else None


def build_server(
    connect: Connect,
    extensions: Sequence[Extension] = (),
    middleware: Sequence[ServerMiddleware[Any]] = (),
) -> MCPServer[Any]:
    """The jobgate MCP server; `connect` gives each tool call its REST client;
    `extensions` and `middleware` add MCP tasks (`tasks.py`, `legacy_tasks.py`)."""
    checked = ArgumentCheck()  # innermost: an unknown argument is refused before the tool
    server: MCPServer[Any] = MCPServer(
        "jobgate",
        instructions=INSTRUCTIONS,
        extensions=list(extensions),
        middleware=[*middleware, checked],
    )
    checked.bind(server)

    async def run(
        ctx: Context[Any, Any],
        act: Callable[[AsyncClient], Awaitable[CallToolResult]],
        op_id: str | None = None,
    ) -> CallToolResult:
        """One tool call: refusals become tool errors carrying the operation's body (the
        one sent beside the error, or a fresh read when an older gateway sent none). An
        id that no operation can have is refused here: it becomes a path segment, and
        `op_x/events` would otherwise reach another route."""
        if op_id is not None and not ids.is_operation_id(op_id):
            return replies.error(
                "operation_not_found",
                f"No operation {op_id[:MAX_SHOWN_ID]!r}: operation ids are op_ followed by "
                "26 letters and digits, as start_operation and list_operations give them.",
            )
        client = connect(ctx)
        try:
            return await act(client)
        except UsageError as exc:
            return replies.usage_error(str(exc))
        except (ApiError, GatewayUnavailable) as exc:
            operation = exc.operation if isinstance(exc, ApiError) else None
            if operation is None and op_id and isinstance(exc, ConflictError):
                operation = await _fresh(client, op_id)
            return replies.refused(exc, operation)

    @server.tool(
        name="start_operation",
        description=START_DESCRIPTION,
        annotations=ToolAnnotations(idempotent_hint=True, destructive_hint=False),
    )
    async def start_operation(
        provider: Annotated[str, Field(description="provider profile, e.g. 'mock'")],
        kind: Annotated[str, Field(description="job kind at that provider, e.g. 'report'")],
        input: Annotated[
            dict[str, Any],
            Field(
                description="the provider's input (JSON object); the gateway's options "
                "(deadlines, callback_url, labels, validation) are separate arguments, "
                "never inside it"
            ),
        ],
        idempotency_key: Annotated[
            str, Field(min_length=1, max_length=255, description=IDEMPOTENCY_KEY_ADVICE)
        ],
        ctx: Context[Any, Any],
        deadlines: DeadlinesArg | None = None,
        callback_url: str | None = None,
        labels: dict[str, str] | None = None,
        validation: ValidationArg | None = None,
    ) -> Annotated[CallToolResult, OperationOut]:
        refused = _refuse_start(input, idempotency_key)
        if refused is not None:
            return refused

        async def act(c: AsyncClient) -> CallToolResult:
            body = await c.start(
                provider,
                kind,
                input,
                idempotency_key=idempotency_key,
                deadlines=_deadlines(deadlines),
                callback_url=callback_url,
                labels=labels,
                validation=_validation(validation),
            )
            return replies.operation_reply(body)

        return await run(ctx, act)

    @server.tool(
        name="get_operation",
        description="The operation as it is now: `done`, `status`, `outcome`, and `message` "
        "saying where it stands and what to do next. " + STOP_RULES,
        annotations=READ,
    )
    async def get_operation(
        operation_id: OpId, ctx: Context[Any, Any]
    ) -> Annotated[CallToolResult, OperationOut]:
        async def act(c: AsyncClient) -> CallToolResult:
            return replies.operation_reply(await c.get(operation_id))

        return await run(ctx, act, operation_id)

    @server.tool(
        name="wait_for_operation",
        description=f"Wait in the gateway until the operation is done, at most timeout_seconds "
        f"(0 to {WAIT_CAP_S:g}; a larger value is refused). `outcome` says how it ended: "
        "succeeded, completed_with_errors, failed, cancelled, needs_attention, or timed_out "
        "(only the wait ended: the job continues; call this again with the same operation_id). "
        "The gateway may learn a job's end up to its provider's polling cap late (the "
        "message says how late). " + STOP_RULES,
        annotations=READ,
    )
    async def wait_for_operation(
        operation_id: OpId,
        ctx: Context[Any, Any],
        timeout_seconds: Annotated[float, Field(ge=0, le=WAIT_CAP_S)] = WAIT_DEFAULT_S,
    ) -> Annotated[CallToolResult, OperationOut]:
        async def act(c: AsyncClient) -> CallToolResult:
            body = await c.wait(operation_id, min(timeout_seconds, WAIT_CAP_S))
            return replies.operation_reply(body)

        return await run(ctx, act, operation_id)

    @server.tool(
        name="cancel_operation",
        description="Ask the gateway to cancel the operation. It is NOT cancelled until a "
        "later body says status cancelled (it may still end `succeeded` if the job got "
        "there first): wait_for_operation to see how it ends. " + STOP_RULES,
        annotations=ToolAnnotations(idempotent_hint=True, destructive_hint=True),
    )
    async def cancel_operation(
        operation_id: OpId,
        ctx: Context[Any, Any],
        reason: Annotated[str, Field(max_length=1000)] = "",
    ) -> Annotated[CallToolResult, OperationOut]:
        async def act(c: AsyncClient) -> CallToolResult:
            return replies.operation_reply(await c.cancel(operation_id, reason))

        return await run(ctx, act, operation_id)

    @server.tool(
        name="get_result",
        description="The collected and checked result. A large one comes in chunks of its "
        "JSON text: pass next_cursor back until `complete` is true. Refused (with the "
        "operation's state) while there is no result. A cancelled or failed operation's "
        "kept partial output comes with that status: it is NOT a success.",
        annotations=READ,
    )
    async def get_result(
        operation_id: OpId,
        ctx: Context[Any, Any],
        cursor: str | None = None,
        max_chars: Annotated[
            int, Field(ge=1, le=replies.MAX_RESULT_CHUNK_CHARS)
        ] = replies.RESULT_CHUNK_CHARS,
    ) -> Annotated[CallToolResult, ResultOut]:
        async def act(c: AsyncClient) -> CallToolResult:
            body = await c.result(operation_id)
            return replies.result_reply(body, cursor, max_chars)

        return await run(ctx, act, operation_id)

    @server.tool(
        name="get_errors",
        description="The items that failed or never ran, of a partial result "
        "(completed_with_errors) or a cancelled job, a bounded page at a time; pass "
        "next_cursor back for the next page. Report them with the rest of the output.",
        annotations=READ,
    )
    async def get_errors(
        operation_id: OpId,
        ctx: Context[Any, Any],
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
        cursor: str | None = None,
    ) -> Annotated[CallToolResult, ErrorsOut]:
        async def act(c: AsyncClient) -> CallToolResult:
            return replies.errors_reply(await c.errors(operation_id, limit, cursor))

        return await run(ctx, act, operation_id)

    @server.tool(
        name="list_operations",
        description="Your operations, those still in flight first (newest first within "
        "each group): read it at the start of a run to pick up work that is not finished.",
        annotations=READ,
    )
    async def list_operations(
        ctx: Context[Any, Any],
        limit: Annotated[int, Field(ge=1, le=LIST_MAX)] = 20,
        cursor: str | None = None,
    ) -> Annotated[CallToolResult, ListOut]:
        async def act(c: AsyncClient) -> CallToolResult:
            page, in_flight = await in_flight_first(c, limit, cursor)
            return replies.list_reply(page, in_flight)

        return await run(ctx, act)

    @server.tool(
        name="list_attention",
        description="Operators only: operations that need a human, and why. An agent's key "
        "is refused: tell the user which operations need a human instead.",
        annotations=READ,
    )
    async def list_attention(
        ctx: Context[Any, Any], limit: Annotated[int, Field(ge=1, le=200)] = 50
    ) -> Annotated[CallToolResult, AttentionOut]:
        async def act(c: AsyncClient) -> CallToolResult:
            await require_operator(c)
            listing = await c.attention(limit)
            return replies.attention_reply(listing)

        return await run(ctx, act)

    @server.tool(
        name="decide_approval",
        description="Operators only: approve or deny, with a reason, a create the gateway's "
        "policy holds for approval (status awaiting_approval; docs/policy.md). Approved, it "
        "is sent like any create; denied, it ends failed and is never sent. Never with the "
        "key that created it; an agent's key is refused.",
        annotations=ToolAnnotations(idempotent_hint=False, destructive_hint=True),
    )
    async def decide_approval(
        operation_id: OpId,
        decision: Literal["approve", "deny"],
        reason: Annotated[str, Field(min_length=1, max_length=1000)],
        ctx: Context[Any, Any],
    ) -> Annotated[CallToolResult, OperationOut]:
        async def act(c: AsyncClient) -> CallToolResult:
            await require_operator(c, "decide_approval")
            decide = c.approve if decision == "approve" else c.deny
            return replies.operation_reply(await decide(operation_id, reason))

        return await run(ctx, act, operation_id)

    return server


def _refuse_start(input: dict[str, Any], key: str) -> CallToolResult | None:
    """What the REST API would refuse, and the client could not even send (a non-ASCII
    header, NaN in JSON), refused here with the API's own code."""
    if not ids.is_idempotency_key(key):
        return replies.error(
            "idempotency_key_invalid",
            "idempotency_key must be printable ASCII with no space at either end "
            "(for example a UUID).",
        )
    try:
        json_guard.check(input)
    except json_guard.InvalidValue as exc:
        reason = str(exc.details["reason"])
        pointer = "/input" + str(exc.details.get("pointer", ""))  # as REST names it
        message = f"Invalid value at {pointer}: {json_guard.REASONS[reason]}."
        return replies.error(exc.code, message, {"reason": reason, "pointer": pointer})
    return None


def _deadlines(arg: DeadlinesArg | None) -> Deadlines | None:
    return cast(Deadlines, arg.model_dump(exclude_none=True)) if arg else None


async def _fresh(client: AsyncClient, op_id: str) -> Operation | None:
    try:
        return await client.get(op_id)
    except (ApiError, GatewayUnavailable):
        return None


async def require_operator(client: AsyncClient, tool: str = "list_attention") -> None:
    """AuthError 403 unless the key is an operator's or admin's (`GET /v1/whoami`): the
    REST inbox also answers an agent, with its own items, but this tool is for operators."""
    me = await client.request("GET", "/v1/whoami")
    if not (isinstance(me, dict) and me.get("is_operator")):
        raise AuthError(
            403,
            "forbidden",
            f"{tool} is for operator and admin keys; this key is an "
            "agent's. Tell the user which operations need a human instead.",
        )


async def in_flight_first(
    client: AsyncClient, limit: int, cursor: str | None
) -> tuple[OperationList, int]:
    """A page of operations: first every in-flight one, then the done ones.

    The cursor says which list it continues: `f:` + the REST cursor of the in-flight
    list, or `d:` + that of the done list."""
    phase, rest = _split(cursor)
    items: list[Operation] = []
    in_flight = 0
    if phase == "f":
        page = await client.list(in_flight=True, limit=limit, cursor=rest)
        items = page["items"]
        in_flight = len(items)
        if page["next_cursor"]:
            return {"items": items, "next_cursor": "f:" + page["next_cursor"]}, in_flight
        phase, rest = "d", None
    left = limit - len(items)
    if left <= 0:
        return {"items": items, "next_cursor": "d:"}, in_flight
    page = await client.list(in_flight=False, limit=left, cursor=rest)
    more = page["next_cursor"]
    return {"items": items + page["items"], "next_cursor": "d:" + more if more else None}, in_flight


def _split(cursor: str | None) -> tuple[str, str | None]:
    if not cursor:
        return "f", None
    phase, sep, rest = cursor.partition(":")
    if not sep or phase not in ("f", "d"):
        raise UsageError(f"cursor {cursor!r} is not one list_operations handed out")
    return phase, rest or None
