"""MCP tasks in the 2025-11-25 revision's core form, at /mcp of a real gateway process.

Sent as raw JSON-RPC: the official client validates a handshake-era `tools/call` answer
as a `CallToolResult`, so it cannot receive that revision's `CreateTaskResult`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support.agent_stack import LONG_DEADLINES, agent_env, gateway, mock_job
from tests.support.processes import gateway_process

VERSION = "2025-11-25"
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": VERSION,
}


class Rpc:
    """JSON-RPC requests to `{url}/mcp` at 2025-11-25 (the endpoint is stateless)."""

    def __init__(self, url: str) -> None:
        self.http = httpx2.Client(base_url=url, headers=HEADERS, timeout=60)

    def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        r = self.http.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        )
        assert r.status_code == 200, r.text
        return dict(r.json())

    def start(self, scenario: dict[str, Any], **extra: Any) -> dict[str, Any]:
        arguments = {
            "provider": "mock",
            "kind": "report",
            "input": mock_job(scenario),
            "idempotency_key": uuid.uuid4().hex,
            **extra,
        }
        params = {"name": "start_operation", "arguments": arguments, "task": {"ttl": 60000}}
        return self("tools/call", params)


@pytest.fixture
def rpc_at() -> Iterator[Any]:
    made: list[Rpc] = []

    def make(url: str) -> Rpc:
        made.append(Rpc(url))
        return made[-1]

    yield make
    for rpc in made:
        rpc.http.close()


def test_the_capability_and_the_task_tool_are_advertised(
    database_url: str, mock_url: str, tmp_path: Path, rpc_at: Any
) -> None:
    with gateway(agent_env(database_url, mock_url, tmp_path), tmp_path / "gw.log") as url:
        rpc = rpc_at(url)
        init = rpc(
            "initialize",
            {
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        )["result"]
        tools = {t["name"]: t for t in rpc("tools/list", {})["result"]["tools"]}
    assert init["capabilities"]["tasks"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
    assert tools["start_operation"]["execution"] == {"taskSupport": "optional"}
    assert "execution" not in tools["get_operation"]


def test_a_legacy_task_survives_a_restart_and_tasks_result_gives_the_outcome(
    database_url: str, mock_url: str, tmp_path: Path, rpc_at: Any
) -> None:
    env = agent_env(database_url, mock_url, tmp_path)
    with gateway_process(env, tmp_path / "first.log", observer=False) as (_, url):
        rpc = rpc_at(url)
        created = rpc.start({"name": "slow", "polls": 2})["result"]
        task = created["task"]
        seen = rpc("tasks/get", {"taskId": task["taskId"]})["result"]
    assert task["status"] == "working" and task["taskId"].startswith("op_")
    assert task["ttl"] is None and task["pollInterval"] >= 1
    assert seen["status"] == "working" and "result" not in seen and "resultType" not in seen
    with gateway(env, tmp_path / "second.log") as url:
        rpc = rpc_at(url)
        result = rpc("tasks/result", {"taskId": task["taskId"]})["result"]
        done = rpc("tasks/get", {"taskId": task["taskId"]})["result"]
        refused = rpc("tasks/cancel", {"taskId": task["taskId"]})["error"]
    assert result["structuredContent"]["outcome"] == "succeeded"
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    assert done["status"] == "completed"
    assert refused["code"] == -32602  # a terminal task is not cancelled again


def test_a_legacy_cancel_answers_the_task_and_unknown_ids_are_invalid(
    database_url: str, mock_url: str, tmp_path: Path, rpc_at: Any
) -> None:
    with gateway(agent_env(database_url, mock_url, tmp_path), tmp_path / "gw.log") as url:
        rpc = rpc_at(url)
        task = rpc.start({"name": "never_finishes"}, deadlines=LONG_DEADLINES)["result"]["task"]
        cancelled = rpc("tasks/cancel", {"taskId": task["taskId"]})["result"]
        ended = rpc("tasks/result", {"taskId": task["taskId"]})["result"]
        missing = rpc("tasks/get", {"taskId": "op_01JD7ZQ6R4X0P8V6N1K2M3B4F0"})["error"]
        refused = rpc.start({"name": "fast"}, deadlines={"create_seconds": -1})["error"]
        update = rpc("tasks/update", {"taskId": task["taskId"], "inputResponses": {}})["error"]
    assert cancelled["taskId"] == task["taskId"] and cancelled["status"] == "working"
    assert ended["structuredContent"]["outcome"] == "cancelled"
    assert missing["code"] == -32602 and "No task" in missing["message"]
    assert refused["code"] == -32602
    assert update["code"] == -32601  # the extension's method, not this revision's
