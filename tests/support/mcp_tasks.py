"""The client half of the MCP tasks extension, on the official SDK's public client API.

The SDK (`mcp` 2.3) has no task runtime, but its client takes extensions: this one
declares `io.modelcontextprotocol/tasks`, claims the `resultType: "task"` answer of
`tools/call` (so `Client.call_tool` polls `tasks/get` and returns the final result,
as the extension advises a client to) and sends `tasks/get`, `tasks/cancel` and
`tasks/update` as typed requests (with the `Mcp-Name` header the transport asks for).
"""

from __future__ import annotations

from typing import Any, Literal

import anyio
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp.types import CallToolResult, Request, RequestParams, Result
from pydantic import ConfigDict, Field, TypeAdapter

TASKS = "io.modelcontextprotocol/tasks"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
_ANY = TypeAdapter(dict[str, Any])


class CreateTaskResult(Result):
    """A task handle answered instead of a tool result."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")


class TaskParams(RequestParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    task_id: str = Field(alias="taskId")


class UpdateParams(TaskParams):
    input_responses: dict[str, Any] = Field(alias="inputResponses")


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class CancelTask(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class UpdateTask(Request[UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


async def get_task(session: ClientSession, task_id: str) -> dict[str, Any]:
    return await session.send_request(GetTask(params=TaskParams(taskId=task_id)), _ANY)


async def cancel_task(session: ClientSession, task_id: str) -> dict[str, Any]:
    return await session.send_request(CancelTask(params=TaskParams(taskId=task_id)), _ANY)


async def update_task(
    session: ClientSession, task_id: str, responses: dict[str, Any]
) -> dict[str, Any]:
    request = UpdateTask(params=UpdateParams(taskId=task_id, inputResponses=responses))
    return await session.send_request(request, _ANY)


async def poll_until_terminal(
    session: ClientSession, task_id: str, max_polls: int = 400, interval_s: float = 0.05
) -> dict[str, Any]:
    """`tasks/get` until the task ends (or needs input), honouring a short poll interval
    (the test gateway is time-scaled)."""
    for _ in range(max_polls):
        task = await get_task(session, task_id)
        if task["status"] in TERMINAL or task["status"] == "input_required":
            return task
        await anyio.sleep(min(interval_s, (task.get("pollIntervalMs") or 50) / 1000))
    raise AssertionError(f"task {task_id} still {task['status']} after {max_polls} polls")


class TasksExtension(ClientExtension):
    """Declares the tasks extension; `call_tool` resolves a task to its final result."""

    identifier = TASKS

    def __init__(self) -> None:
        self.handles: list[CreateTaskResult] = []  # every handle seen, for assertions

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self._resolve)]

    async def _resolve(self, handle: CreateTaskResult, ctx: ClaimContext) -> CallToolResult:
        self.handles.append(handle)
        task = await poll_until_terminal(ctx.session, handle.task_id)
        if task["status"] != "completed":
            raise AssertionError(f"task {handle.task_id} ended {task['status']}: {task}")
        return CallToolResult.model_validate(task["result"])


def tasks_client(transport: Any, extension: TasksExtension | None = None) -> Client:
    """The official client over `transport`, declaring the tasks extension."""
    return Client(transport, extensions=[extension or TasksExtension()])
