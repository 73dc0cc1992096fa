"""Over streamable HTTP, a call made while the gateway is down is a tool error with
words, and the same MCP session goes on once the gateway is back (docs/mcp.md).

A real gateway process on a fixed port is SIGKILLed and started again on that port;
the official MCP client keeps one session through it, with `ToolErrorWhenDown` as its
HTTP transport.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx2
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

from jobgate_client.mcp_http import ToolErrorWhenDown
from tests.support.agent_stack import agent_env, call, text_of
from tests.support.processes import Process, free_port, wait_healthy


def serve(env: dict[str, str], port: int, log: Path) -> Process:
    proc = Process(["serve", "--port", str(port), "--log-level", "warning"], env, log).start()
    wait_healthy(f"http://127.0.0.1:{port}", proc)
    return proc


async def test_a_call_while_the_gateway_is_down_is_a_tool_error_and_the_session_lives(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    env = agent_env(database_url, mock_url, tmp_path)
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    start = {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": {"name": "fast"}},
        "idempotency_key": uuid.uuid4().hex,
    }
    first = serve(env, port, tmp_path / "first.log")
    second: Process | None = None
    try:
        timeout = httpx2.Timeout(30.0, read=120.0)
        async with (
            httpx2.AsyncClient(transport=ToolErrorWhenDown(), timeout=timeout) as http,
            McpClient(streamable_http_client(url, http_client=http)) as client,
        ):
            listed = await call(client, "list_operations")
            assert not listed.is_error, text_of(listed)

            first.kill()  # down, without a word to anyone
            refused = await call(client, "start_operation", **start)
            assert refused.is_error
            words = text_of(refused)
            assert "could not be reached" in words and "same idempotency_key" in words, words
            error = (refused.structured_content or {})["error"]
            assert error["code"] == "gateway_unavailable"

            second = serve(env, port, tmp_path / "second.log")
            started = await call(client, "start_operation", **start)  # the same session
            assert not started.is_error, text_of(started)
            op_id = (started.structured_content or {})["operation_id"]
            done = await call(client, "wait_for_operation", operation_id=op_id, timeout_seconds=20)
            assert (done.structured_content or {})["outcome"] == "succeeded", text_of(done)
    finally:
        first.kill()
        if second is not None:
            second.kill()


async def test_a_gateway_answer_passes_through_unchanged() -> None:
    """Only a missing gateway is stood in for: its own refusals are its own."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path == "/down":
            raise httpx2.ConnectError("refused", request=request)
        if request.url.path == "/proxy":
            return httpx2.Response(502, text="bad gateway")
        own = {"jsonrpc": "2.0", "id": 7, "error": {"code": 1, "message": "own"}}
        return httpx2.Response(503, json=own)

    transport = ToolErrorWhenDown(httpx2.MockTransport(handler))
    rpc = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x"}}
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        own = await http.post("/own", json=rpc)
        assert own.status_code == 503 and own.json()["error"]["message"] == "own"
        for path in ("/down", "/proxy"):
            stood = (await http.post(path, json=rpc)).json()
            assert stood["id"] == 7 and stood["result"]["isError"] is True, stood
        listing = (await http.post("/down", json={**rpc, "method": "tools/list"})).json()
        assert (
            listing["error"]["code"] == -32000
            and "could not be reached" in listing["error"]["message"]
        )
        note = await http.post("/down", json={"jsonrpc": "2.0", "method": "notifications/x"})
        assert note.status_code == 202
