"""MCP tasks as the 2025-11-25 revision had them in its core, for clients of that era.

That revision's client asks for a task on the call (`params.task` on `tools/call`), reads
it with `tasks/get`, collects the result with `tasks/result` (which blocks until the task
ends) and cancels with `tasks/cancel`. The task is the operation here too
(`task_view.py`), only in that revision's shapes. The SDK validates a handshake-era
`tools/call` answer as a `CallToolResult` and advertises no `tasks` capability, so the
parts of a call the SDK would reshape are done in a middleware (`MCPServer(middleware=)`,
its public hook that owns its result); `tasks/*` are the extension's methods
(`tasks.py`), which answer in these shapes at this revision. docs/mcp.md has the table.
"""

from __future__ import annotations

from typing import Any, cast

from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types.jsonrpc import INVALID_PARAMS

from app.mcp import replies, task_view
from jobgate_client import Operation

LEGACY_VERSION = "2025-11-25"
RELATED_TASK = "io.modelcontextprotocol/related-task"
# Only start_operation may be called as a task at this revision: a task-augmented call
# must answer a task every time, and wait_for_operation's answer is the wait.
LEGACY_TASK_TOOLS = frozenset({"start_operation"})
CAPABILITY: dict[str, Any] = {"cancel": {}, "requests": {"tools": {"call": {}}}}


def status_of(body: Operation) -> str:
    """As at the later revision; `input_required` here means only that a person must act
    (an operator, through the REST API or the operator view): this revision would send
    its questions on `tasks/result`'s stream, which a stateless JSON endpoint has not."""
    return task_view.status_of(body)


def task_of(body: Operation) -> dict[str, Any]:
    """A `Task` of this revision (`ttl` and `pollInterval`, no inlined result)."""
    task: dict[str, Any] = {
        "taskId": body["operation_id"],
        "status": status_of(body),
        "statusMessage": body["message"],
        "createdAt": body["created_at"],
        "lastUpdatedAt": body["updated_at"],
        "ttl": None,
    }
    poll = task_view.poll_interval_ms(body)
    if poll is not None:
        task["pollInterval"] = poll
    return task


def result_of(body: Operation) -> dict[str, Any]:
    """`tasks/result`: the `get_operation` tool result, tied to its task. It is asked for
    once the operation is done, a task that needs a person included (its `outcome` says
    `needs_attention`): the request is not held for an operator."""
    result = replies.operation_reply(body).model_dump(by_alias=True, mode="json", exclude_none=True)
    meta = dict(result.get("_meta") or {})
    meta[RELATED_TASK] = {"taskId": body["operation_id"]}
    return {**result, "_meta": meta}


class LegacyTasks:
    """Middleware for 2025-11-25 requests: the `tasks` capability on `initialize`,
    `execution.taskSupport` on the task tools in `tools/list`, and a `CreateTaskResult`
    for a task-augmented `start_operation`. Every other request passes through."""

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            return _with_capability(result)
        if ctx.protocol_version != LEGACY_VERSION or not isinstance(result, dict):
            return result
        if ctx.method == "tools/list":
            return _with_task_support(result)
        if ctx.method == "tools/call" and _asks_for_task(ctx.params):
            return _created(result)
        return result


def _with_capability(result: dict[str, Any]) -> dict[str, Any]:
    if result.get("protocolVersion") != LEGACY_VERSION:
        return result
    capabilities = dict(result.get("capabilities") or {})
    capabilities["tasks"] = CAPABILITY
    return {**result, "capabilities": capabilities}


def _with_task_support(result: dict[str, Any]) -> dict[str, Any]:
    tools = []
    for tool in result.get("tools") or []:
        if isinstance(tool, dict) and tool.get("name") in LEGACY_TASK_TOOLS:
            tool = {**tool, "execution": {"taskSupport": "optional"}}
        tools.append(tool)
    return {**result, "tools": tools}


def _asks_for_task(params: Any) -> bool:
    return (
        isinstance(params, dict)
        and params.get("name") in LEGACY_TASK_TOOLS
        and isinstance(params.get("task"), dict)
    )


def _created(result: dict[str, Any]) -> dict[str, Any]:
    """The call's answer as a `CreateTaskResult`; a refusal made no operation, so it
    is an invalid-params error in the tool's own words (no task to hand out)."""
    body = result.get("structuredContent")
    if result.get("isError") or not isinstance(body, dict) or "operation_id" not in body:
        words = " ".join(
            str(block.get("text", "")) for block in result.get("content") or [] if block
        )
        raise MCPError(code=INVALID_PARAMS, message=words or "Refused.", data=body)
    return {"task": task_of(cast(Operation, body))}
