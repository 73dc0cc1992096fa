"""MCP Tasks at /mcp of real gateway processes, through the official client with the tasks
extension declared (tests/support/mcp_tasks.py): a task is the operation, so it is read
after a SIGKILL and restart, by a new client session, and only by its own agent."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from tests.support.agent_stack import (
    LONG_DEADLINES,
    agent_env,
    gateway,
    mcp_session,
    mint_keys,
    mock_job,
    text_of,
)
from tests.support.mcp_tasks import (
    CreateTaskResult,
    TasksExtension,
    cancel_task,
    get_task,
    poll_until_terminal,
    tasks_client,
    update_task,
)
from tests.support.processes import gateway_process

ROLES = {"agent-a": "agent", "agent-b": "agent", "ops": "operator"}
ROOT = Path(__file__).resolve().parents[2]


def start_args(scenario: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "provider": "mock",
        "kind": "report",
        "input": mock_job(scenario),
        "idempotency_key": uuid.uuid4().hex,
        **extra,
    }


@asynccontextmanager
async def tasks_session(
    url: str, key: str | None = None, extension: TasksExtension | None = None
) -> AsyncIterator[Client]:
    """The official client at `{url}/mcp`, declaring the tasks extension."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0)) as http:
        transport = streamable_http_client(f"{url}/mcp", http_client=http)
        async with tasks_client(transport, extension) as client:
            yield client


async def start_task(client: Client, scenario: dict[str, Any], **extra: Any) -> CreateTaskResult:
    """`start_operation`, keeping the task handle instead of letting the client poll it."""
    answer = await client.session.call_tool(
        "start_operation", start_args(scenario, **extra), allow_claimed=True
    )
    assert isinstance(answer, CreateTaskResult), answer
    return answer


def cancels_at_mock(mock_url: str, op_id: str) -> list[int]:
    stats = httpx2.get(f"{mock_url}/_mock/stats", params={"client_reference": op_id}).json()
    return [job["cancel_calls"] for job in stats["jobs"].values()]


@pytest.fixture(scope="module")
def keyed(
    module_database_url: str, mock_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, dict[str, str]]]:
    """One gateway (with its observer) in keys mode, and a key per name in ROLES."""
    tmp = tmp_path_factory.mktemp("mcp-tasks")
    keys = mint_keys(module_database_url, ROLES)
    with gateway(agent_env(module_database_url, mock_url, tmp, auth="keys"), tmp / "gw.log") as url:
        yield url, keys


async def test_a_task_is_working_survives_a_restart_and_completes_with_the_outcome(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    env = agent_env(database_url, mock_url, tmp_path)
    # No observer: nothing polls the provider, so the task is certainly still working.
    with gateway_process(env, tmp_path / "first.log", observer=False) as (_, url):
        async with tasks_session(url) as client:
            assert client.protocol_version == "2026-07-28"
            handle = await start_task(client, {"name": "slow", "polls": 2})
            seen = await get_task(client.session, handle.task_id)
    assert handle.status == "working" and handle.task_id.startswith("op_")
    assert handle.poll_interval_ms is not None and handle.poll_interval_ms >= 1
    assert seen["status"] == "working" and seen["taskId"] == handle.task_id
    assert "result" not in seen and "KEEP WAITING" in seen["statusMessage"]
    # The first gateway was SIGKILLed; a new one (with its observer) and a new session.
    with gateway(env, tmp_path / "second.log") as url:
        async with tasks_session(url) as later:
            done = await poll_until_terminal(later.session, handle.task_id)
            again = await get_task(later.session, handle.task_id)
        async with mcp_session(url) as plain:
            body = await plain.call_tool("get_operation", {"operation_id": handle.task_id})
    assert done["status"] == "completed", done
    result = CallToolResult.model_validate(done["result"])
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["outcome"] == "succeeded"
    assert result.structured_content == body.structured_content  # get_operation's body
    assert text_of(result) == result.structured_content["message"]
    assert again["result"] == done["result"]  # a pure read: the same answer again


async def test_call_tool_resolves_the_task_and_a_plain_client_sees_todays_answer(
    keyed: tuple[str, dict[str, str]],
) -> None:
    url, keys = keyed
    extension = TasksExtension()
    async with tasks_session(url, keys["agent-a"], extension) as client:
        finished = await client.call_tool("start_operation", start_args({"name": "slow"}))
    assert [h.status for h in extension.handles] == ["working"]  # a task, then polled
    assert (finished.structured_content or {})["outcome"] == "succeeded", text_of(finished)

    async with mcp_session(url, keys["agent-a"]) as plain:
        assert plain.server_capabilities.extensions is not None
        started = await plain.call_tool(
            "start_operation", start_args({"name": "never_finishes"}, deadlines=LONG_DEADLINES)
        )
        body = started.structured_content or {}
        waited = await plain.call_tool(
            "wait_for_operation", {"operation_id": body["operation_id"], "timeout_seconds": 0.2}
        )
        await plain.call_tool("cancel_operation", {"operation_id": body["operation_id"]})
    # Without the extension: the body at once, NOT finished, and a wait that times out.
    assert not started.is_error and body["done"] is False and body["status"] == "processing"
    assert (waited.structured_content or {})["outcome"] == "timed_out"


async def test_wait_for_operation_answers_a_task_while_not_done(
    keyed: tuple[str, dict[str, str]],
) -> None:
    url, keys = keyed
    async with tasks_session(url, keys["agent-a"]) as client:
        handle = await start_task(client, {"name": "never_finishes"}, deadlines=LONG_DEADLINES)
        waited = await client.session.call_tool(
            "wait_for_operation",
            {"operation_id": handle.task_id, "timeout_seconds": 50},
            allow_claimed=True,
        )
        refused = await client.session.call_tool(
            "wait_for_operation", {"operation_id": "op_nope"}, allow_claimed=True
        )
        await cancel_task(client.session, handle.task_id)
    assert isinstance(waited, CreateTaskResult) and waited.task_id == handle.task_id
    assert isinstance(refused, CallToolResult) and refused.is_error
    assert "operation_not_found" in text_of(refused)


async def test_tasks_cancel_ends_cancelled_with_one_provider_cancel(
    keyed: tuple[str, dict[str, str]], mock_url: str
) -> None:
    url, keys = keyed
    async with tasks_session(url, keys["agent-a"]) as client:
        handle = await start_task(client, {"name": "never_finishes"}, deadlines=LONG_DEADLINES)
        ack = await cancel_task(client.session, handle.task_id)
        ended = await poll_until_terminal(client.session, handle.task_id)
        with pytest.raises(MCPError) as again:
            await cancel_task(client.session, handle.task_id)
    assert ack.get("resultType") == "complete" and set(ack) <= {"resultType", "_meta"}
    assert ended["status"] == "cancelled", ended
    assert "cancel" in ended["statusMessage"].lower()
    assert cancels_at_mock(mock_url, handle.task_id) == [1]
    assert again.value.code == -32602 and "operation_done" in str(again.value.data)


async def test_a_task_that_needs_a_person_asks_for_an_operators_decision(
    keyed: tuple[str, dict[str, str]],
) -> None:
    url, keys = keyed
    async with tasks_session(url, keys["agent-a"]) as client:
        handle = await start_task(client, {"name": "corrupt_result"})
        asked = await poll_until_terminal(client.session, handle.task_id)
        assert asked["status"] == "input_required", asked
        [(key, request)] = asked["inputRequests"].items()
        answer = {
            key: {"action": "accept", "content": {"decision": "abandon", "reason": "bad data"}}
        }
        with pytest.raises(MCPError) as agent_refused:
            await update_task(client.session, handle.task_id, answer)
        ignored = await update_task(client.session, handle.task_id, {"decide:other": {}})
    assert request["method"] == "elicitation/create"
    assert request["params"]["mode"] == "form"
    assert "abandon" in request["params"]["requestedSchema"]["properties"]["decision"]["enum"]
    assert agent_refused.value.code == -32600
    assert "operator" in agent_refused.value.message
    assert (agent_refused.value.data or {})["code"] == "forbidden"
    assert ignored.get("resultType") == "complete"

    async with tasks_session(url, keys["ops"]) as ops:
        assert (await update_task(ops.session, handle.task_id, answer)).get("resultType")
        ended = await poll_until_terminal(ops.session, handle.task_id)
    assert ended["status"] == "completed", ended
    outcome = CallToolResult.model_validate(ended["result"]).structured_content or {}
    assert outcome["outcome"] == "failed" and outcome["state"] == "abandoned"


async def test_an_agent_never_sees_another_agents_task(
    keyed: tuple[str, dict[str, str]],
) -> None:
    url, keys = keyed
    async with tasks_session(url, keys["agent-a"]) as a:
        handle = await start_task(a, {"name": "never_finishes"}, deadlines=LONG_DEADLINES)
    async with tasks_session(url, keys["agent-b"]) as b:
        errors = []
        for call in (get_task, cancel_task):
            with pytest.raises(MCPError) as refused:
                await call(b.session, handle.task_id)
            errors.append(refused.value)
        waited = await b.session.call_tool(
            "wait_for_operation", {"operation_id": handle.task_id}, allow_claimed=True
        )
    assert [e.code for e in errors] == [-32602, -32602]
    assert all("No task" in e.message and handle.task_id in e.message for e in errors)
    assert isinstance(waited, CallToolResult) and waited.is_error
    async with tasks_session(url, keys["agent-a"]) as a:
        assert (await get_task(a.session, handle.task_id))["status"] == "working"
        await cancel_task(a.session, handle.task_id)


async def test_stdio_serves_tasks_with_the_key_from_the_environment(
    keyed: tuple[str, dict[str, str]],
) -> None:
    url, keys = keyed
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.cli", "mcp", "--url", url, "--key-env", "AGENT_KEY"],
        env={"AGENT_KEY": keys["agent-a"]},
        cwd=str(ROOT),
    )
    async with tasks_client(server) as client:
        assert client.protocol_version == "2026-07-28"
        handle = await start_task(client, {"name": "never_finishes"}, deadlines=LONG_DEADLINES)
        seen = await get_task(client.session, handle.task_id)
        await cancel_task(client.session, handle.task_id)
    assert seen["status"] == "working" and seen["taskId"] == handle.task_id
    async with tasks_session(url, keys["agent-b"]) as other:  # the same isolation
        with pytest.raises(MCPError):
            await get_task(other.session, handle.task_id)


@pytest.mark.postgres_only
async def test_a_second_gateway_process_answers_for_the_task_on_postgresql(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    env = agent_env(database_url, mock_url, tmp_path)
    with gateway(env, tmp_path / "a.log") as url_a, gateway(env, tmp_path / "b.log") as url_b:
        async with tasks_session(url_a) as on_a:
            handle = await start_task(on_a, {"name": "slow", "polls": 3})
        async with tasks_session(url_b) as on_b:
            ended = await poll_until_terminal(on_b.session, handle.task_id)
    assert ended["status"] == "completed", ended
    assert CallToolResult.model_validate(ended["result"]).structured_content["outcome"] == (  # type: ignore[index]
        "succeeded"
    )
