"""MCP Tasks (the `io.modelcontextprotocol/tasks` extension): each task is an operation.

A client that declares the extension on its request gets a task handle from
`start_operation` (and from `wait_for_operation`) while the operation is not done,
instead of a body it must wait on. The task id IS the operation id, and `tasks/get`,
`tasks/cancel` and `tasks/update` are REST calls made with the caller's own key
(`GET /v1/operations/{id}`, `POST .../cancel`, `POST .../resolve`). Nothing about a
task lives in this process: any gateway on the same database answers for it, after
any restart, and an agent sees only its own tasks, exactly as over REST.

Built on the SDK's public extension interface (`mcp.server.extension.Extension`); the
SDK has no task runtime of its own. docs/mcp.md says what a task reads like.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolRequestParams, RequestParams
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict, Field

from app.mcp import legacy_tasks, replies, task_view
from app.mcp.tools import WAIT_CAP_S, Connect, build_server
from app.operations.contract import ids
from jobgate_client import (
    ApiError,
    AsyncClient,
    AuthError,
    ConflictError,
    GatewayUnavailable,
    Operation,
)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
# The extension is defined on the stateless revisions only; a handshake-era request
# proceeds as if no task capability had been declared.
TASK_VERSIONS = frozenset(MODERN_PROTOCOL_VERSIONS)
# tasks/get and tasks/cancel also answer the 2025-11-25 core tasks (legacy_tasks.py).
READ_VERSIONS = TASK_VERSIONS | {legacy_tasks.LEGACY_VERSION}
CANCEL_REASON = "cancelled by the MCP client (tasks/cancel)"
MAX_SHOWN_ID = 100  # characters of a refused id repeated back, as the tools do

TaskConnect = Callable[[ServerRequestContext[Any, Any]], AsyncClient]


class TaskIdParams(RequestParams):
    """`tasks/get` and `tasks/cancel`: the task to read or cancel."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    task_id: str = Field(alias="taskId", min_length=1, max_length=200)


class UpdateTaskParams(TaskIdParams):
    """`tasks/update`: answers to the task's outstanding input requests, by key."""

    input_responses: dict[str, Any] = Field(alias="inputResponses", default_factory=dict)


def build_server_with_tasks(connect: Connect, connect_task: TaskConnect) -> MCPServer[Any]:
    """The jobgate MCP server offering tasks in both revisions' forms: the extension, and
    2025-11-25's core tasks. `connect_task` gives a `tasks/*` request its REST client."""
    return build_server(connect, [OperationTasks(connect_task)], [legacy_tasks.LegacyTasks()])


def client_declares_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request's client declared the extension, on a revision that has it."""
    if ctx.protocol_version not in TASK_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    declared = capabilities.extensions if capabilities else None
    return bool(declared) and TASKS_EXTENSION in (declared or {})


class OperationTasks(Extension):
    """The tasks extension over jobgate operations; `connect` gives each request its
    REST client (the caller's key on the gateway, the configured one over stdio)."""

    identifier = TASKS_EXTENSION

    def __init__(self, connect: TaskConnect) -> None:
        self._connect = connect

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskIdParams, self._get, READ_VERSIONS),
            MethodBinding("tasks/cancel", TaskIdParams, self._cancel, READ_VERSIONS),
            MethodBinding("tasks/update", UpdateTaskParams, self._update, TASK_VERSIONS),
            MethodBinding(
                "tasks/result",
                TaskIdParams,
                self._result,
                frozenset({legacy_tasks.LEGACY_VERSION}),
            ),
        )

    async def intercept_tool_call(
        self,
        params: CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        """`start_operation` and `wait_for_operation` answer a task while the operation is
        not done (the client declared it can poll one); everything else is unchanged."""
        if params.name not in task_view.TASK_TOOLS or not client_declares_tasks(ctx):
            return await call_next(ctx)
        if params.name == "wait_for_operation":
            # No held request for a client that polls: a task at once while not done.
            pending = await self._pending(ctx, (params.arguments or {}).get("operation_id"))
            if pending is not None:
                return task_view.created(pending)
            return await call_next(ctx)
        result = await call_next(ctx)
        body = task_view.operation_of(result)
        if body is None or body["done"]:
            return result  # a refusal, or already finished: the plain result is the answer
        return task_view.created(body)

    async def _pending(self, ctx: ServerRequestContext[Any, Any], op_id: Any) -> Operation | None:
        """The operation when it can be read and is not done; otherwise None, and the tool
        itself answers (the finished body, or the refusal in its usual words)."""
        if not isinstance(op_id, str) or not ids.is_operation_id(op_id):
            return None
        try:
            body = await self._connect(ctx).get(op_id)
        except (ApiError, GatewayUnavailable):
            return None
        return None if body["done"] else body

    async def _read(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> Operation:
        client = self._connect(ctx)
        if not ids.is_operation_id(task_id):
            raise _no_task(task_id)
        try:
            return await client.get(task_id)
        except (ApiError, GatewayUnavailable) as exc:
            raise _rpc_error(exc, task_id) from None

    async def _get(
        self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams
    ) -> HandlerResult:
        body = await self._read(ctx, params.task_id)
        if ctx.protocol_version == legacy_tasks.LEGACY_VERSION:
            return legacy_tasks.task_of(body)
        return task_view.detailed(body)

    async def _result(
        self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams
    ) -> HandlerResult:
        """2025-11-25's `tasks/result`: held (a REST wait at a time) until the operation
        is done, then its `get_operation` tool result."""
        body = await self._read(ctx, params.task_id)
        client = self._connect(ctx)
        while not body["done"]:
            try:
                body = await client.wait(params.task_id, WAIT_CAP_S)
            except (ApiError, GatewayUnavailable) as exc:
                raise _rpc_error(exc, params.task_id) from None
        return legacy_tasks.result_of(body)

    async def _cancel(
        self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams
    ) -> HandlerResult:
        """jobgate's cancel: the intent is recorded and sent to the provider once; the task
        reads `cancelled` only when the provider confirmed (`tasks/get` says so)."""
        if not ids.is_operation_id(params.task_id):
            raise _no_task(params.task_id)
        try:
            body = await self._connect(ctx).cancel(params.task_id, CANCEL_REASON)
        except (ApiError, GatewayUnavailable) as exc:
            raise _rpc_error(exc, params.task_id) from None
        if ctx.protocol_version == legacy_tasks.LEGACY_VERSION:
            return legacy_tasks.task_of(body)  # that revision answers the task
        return {}

    async def _update(
        self, ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams
    ) -> HandlerResult:
        """An operator's decision on a task that needs a person. Answers for a key that is
        not outstanding (already answered, or never asked) are ignored, as the extension
        says; a key that may not decide is refused with the gateway's words."""
        body = await self._read(ctx, params.task_id)
        decision = task_view.decision_of(body, params.input_responses)
        if decision is None:
            return {}
        client = self._connect(ctx)
        try:
            await client.resolve(
                body["operation_id"],
                decision.decision,
                decision.reason,
                remote_job_id=decision.remote_job_id,
            )
        except AuthError as exc:
            raise MCPError(
                code=INVALID_REQUEST,
                message=f"tasks/update carries an operator's decision, and this key may not "
                f"make one ({exc.status} {exc.code}): {exc.message} Tell the user which task "
                "needs a person; an operator resolves it.",
                data=_error_data(exc),
            ) from None
        except (ApiError, GatewayUnavailable) as exc:
            raise _rpc_error(exc, params.task_id) from None
        return {}


def _no_task(task_id: str) -> MCPError:
    return MCPError(
        code=INVALID_PARAMS,
        message=f"No task {task_id[:MAX_SHOWN_ID]!r}: task ids are the operation ids "
        "start_operation gives (op_ followed by 26 letters and digits).",
        data={"code": "operation_not_found"},
    )


def _error_data(exc: ApiError | GatewayUnavailable) -> dict[str, Any]:
    if isinstance(exc, GatewayUnavailable):
        return {"code": "gateway_unavailable"}
    data: dict[str, Any] = {"code": exc.code, "details": exc.details}
    if exc.operation is not None:
        data["operation"] = replies.with_tool(exc.operation)
    return data


def _rpc_error(exc: ApiError | GatewayUnavailable, task_id: str) -> MCPError:
    """A REST refusal as a JSON-RPC error: an unknown (or another agent's) task and a
    request that does not fit the task are invalid params, a missing or refused key an
    invalid request, an unreachable gateway an internal error to retry."""
    if isinstance(exc, GatewayUnavailable):
        return MCPError(
            code=INTERNAL_ERROR,
            message=f"The gateway could not be reached: {exc}. Try the same call again later.",
            data=_error_data(exc),
        )
    if exc.status == 404:
        return MCPError(
            code=INVALID_PARAMS, message=_no_task(task_id).error.message, data=_error_data(exc)
        )
    code = INVALID_REQUEST if isinstance(exc, AuthError) else INVALID_PARAMS
    if not isinstance(exc, AuthError | ConflictError) and exc.status >= 500:
        code = INTERNAL_ERROR
    message = f"Refused by the gateway ({exc.status} {exc.code}): {exc.message}"
    if exc.operation is not None:
        message += f" Task {task_id}: {exc.operation['message']}"
    return MCPError(code=code, message=message, data=_error_data(exc))
