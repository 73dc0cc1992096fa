"""MCP tasks with a client no one here wrote: FastMCP's client with `fastmcp-tasks` (on the
same official SDK), over streamable HTTP at /mcp of real gateway processes.

Installed by the `interop` extra (`pip install -e '.[dev,interop]'`); without it this
module is skipped.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest

pytest.importorskip("fastmcp_tasks")

from fastmcp import Client  # noqa: E402
from fastmcp.client.transports import StreamableHttpTransport  # noqa: E402
from fastmcp_tasks import ToolTask, call_tool_task  # noqa: E402

from tests.support.agent_stack import LONG_DEADLINES, agent_env, gateway, mock_job  # noqa: E402
from tests.support.processes import gateway_process  # noqa: E402


def start_args(scenario: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "provider": "mock",
        "kind": "report",
        "input": mock_job(scenario),
        "idempotency_key": uuid.uuid4().hex,
        **extra,
    }


def fastmcp_client(url: str) -> Client[StreamableHttpTransport]:
    return Client(StreamableHttpTransport(f"{url}/mcp"), timeout=60)


async def test_a_fastmcp_task_survives_a_sigkill_and_collects_succeeded(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    env = agent_env(database_url, mock_url, tmp_path)
    with gateway_process(env, tmp_path / "first.log", observer=False) as (_, url):
        async with fastmcp_client(url) as client:
            task = await call_tool_task(
                client, "start_operation", start_args({"name": "slow", "polls": 2})
            )
            first = await task.status()
    assert first.status == "working" and first.task_id.startswith("op_")
    # SIGKILLed; a new gateway with its observer, and a new client session.
    with gateway(env, tmp_path / "second.log") as url:
        async with fastmcp_client(url) as later:
            again = ToolTask(later, "start_operation", task.create_result)
            result = await again.result()
            plain = await later.call_tool("start_operation", start_args({"name": "slow"}))
    assert not result.is_error
    assert (result.structured_content or {})["outcome"] == "succeeded"
    assert (result.structured_content or {})["operation_id"] == task.task_id
    # A plain call_tool from the same client is polled to the finished result.
    assert (plain.structured_content or {})["outcome"] == "succeeded"
    assert (plain.structured_content or {})["done"] is True


async def test_a_fastmcp_cancel_ends_cancelled_with_one_provider_cancel(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    env = agent_env(database_url, mock_url, tmp_path)
    with gateway(env, tmp_path / "gw.log") as url:
        async with fastmcp_client(url) as client:
            task = await call_tool_task(
                client,
                "start_operation",
                start_args({"name": "never_finishes"}, deadlines=LONG_DEADLINES),
            )
            await task.cancel()
            ended = await task.wait(timeout=30)
    assert ended.status == "cancelled", ended
    stats = httpx2.get(f"{mock_url}/_mock/stats", params={"client_reference": task.task_id})
    assert [job["cancel_calls"] for job in stats.json()["jobs"].values()] == [1]
