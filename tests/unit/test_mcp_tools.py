"""The MCP tools in memory (official client, server object) over a fake REST API."""

from __future__ import annotations

import json
from typing import Any

import httpx2
from mcp import Client as McpClient

from app.mcp.replies import with_tool
from app.mcp.tools import build_server
from jobgate_client import AsyncClient


def op(op_id: str, *, done: bool, status: str = "processing", **kw: Any) -> dict[str, Any]:
    body = {
        "operation_id": op_id,
        "status": status,
        "done": done,
        "state": "observing",
        "message": f"The job {op_id} is {status}. More words.",
        "next_action": {"call": f"GET /v1/operations/{op_id}/wait", "after_seconds": 5},
        "provider": "mock",
        "kind": "report",
    }
    body.update(kw)
    return body


class FakeGateway:
    """A REST API with a handful of operations; records the requests it got."""

    def __init__(self, role: str = "agent") -> None:
        self.role = role
        self.requests: list[httpx2.Request] = []
        self.result = {"rows": [{"n": i, "text": "x" * 20} for i in range(50)]}
        self.flight = [op(f"op_01JD7ZQ6R4X0P8V6N1K2M3B4F{i}", done=False) for i in range(3)]
        self.done = [
            op(f"op_01JD7ZQ6R4X0P8V6N1K2M3B4D{i}", done=True, status="succeeded") for i in range(4)
        ]

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        path, params = request.url.path, dict(request.url.params)
        if path == "/v1/operations":
            pool = self.flight if params["in_flight"] == "true" else self.done
            start = int(params.get("cursor") or 0)
            end = start + int(params["limit"])
            more = str(end) if end < len(pool) else None
            return httpx2.Response(200, json={"items": pool[start:end], "next_cursor": more})
        if path.endswith("/result"):
            payload = {
                "operation_id": "op_01JD7ZQ6R4X0P8V6N1K2M3B4D0",
                "status": "succeeded",
                "result": self.result,
            }
            return httpx2.Response(200, json=payload)
        if path.endswith("/cancel"):
            err = {"code": "operation_done", "message": "already done"}
            return httpx2.Response(409, json={"error": err})
        if path == "/v1/operations/op_01JD7ZQ6R4X0P8V6N1K2M3B4D0":
            return httpx2.Response(200, json=self.done[0])
        if path == "/v1/attention":
            return httpx2.Response(200, json={"items": []})
        if path == "/v1/whoami":
            who = {"principal": "k", "role": self.role, "is_operator": self.role != "agent"}
            return httpx2.Response(200, json=who)
        return httpx2.Response(404, json={"error": {"code": "operation_not_found", "message": ""}})


def server_for(gateway: FakeGateway) -> Any:
    transport = httpx2.MockTransport(gateway)
    return build_server(lambda ctx: AsyncClient("http://gw", "k", transport=transport))


async def test_a_large_result_comes_in_chunks_that_rebuild_it() -> None:
    gateway = FakeGateway()
    chunks: list[str] = []
    async with McpClient(server_for(gateway)) as client:
        cursor = None
        for _ in range(20):
            args: dict[str, Any] = {
                "operation_id": "op_01JD7ZQ6R4X0P8V6N1K2M3B4D0",
                "max_chars": 500,
            }
            if cursor:
                args["cursor"] = cursor
            page = (await client.call_tool("get_result", args)).structured_content or {}
            chunks.append(page["result_chunk"])
            cursor = page["next_cursor"]
            if page["complete"]:
                break
        forged = await client.call_tool(
            "get_result", {"operation_id": "op_01JD7ZQ6R4X0P8V6N1K2M3B4D0", "cursor": "9x"}
        )
    assert json.loads("".join(chunks)) == gateway.result and len(chunks) > 2
    assert forged.is_error


async def test_list_operations_puts_in_flight_first_across_pages() -> None:
    gateway = FakeGateway()
    seen: list[str] = []
    async with McpClient(server_for(gateway)) as client:
        cursor = None
        for _ in range(10):
            args: dict[str, Any] = {"limit": 2}
            if cursor:
                args["cursor"] = cursor
            page = (await client.call_tool("list_operations", args)).structured_content or {}
            seen += [o["operation_id"] for o in page["items"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
    assert seen == [
        "op_01JD7ZQ6R4X0P8V6N1K2M3B4F0",
        "op_01JD7ZQ6R4X0P8V6N1K2M3B4F1",
        "op_01JD7ZQ6R4X0P8V6N1K2M3B4F2",
        "op_01JD7ZQ6R4X0P8V6N1K2M3B4D0",
        "op_01JD7ZQ6R4X0P8V6N1K2M3B4D1",
        "op_01JD7ZQ6R4X0P8V6N1K2M3B4D2",
        "op_01JD7ZQ6R4X0P8V6N1K2M3B4D3",
    ]


async def test_an_old_gateway_409_is_completed_with_a_fresh_read_of_the_operation() -> None:
    gateway = FakeGateway()
    async with McpClient(server_for(gateway)) as client:
        refused = await client.call_tool(
            "cancel_operation", {"operation_id": "op_01JD7ZQ6R4X0P8V6N1K2M3B4D0"}
        )
    assert refused.is_error and refused.structured_content is not None
    assert (
        refused.structured_content["operation"]["operation_id"] == "op_01JD7ZQ6R4X0P8V6N1K2M3B4D0"
    )
    assert [r.method for r in gateway.requests] == ["POST", "GET"]


async def test_list_attention_refuses_a_key_whoami_says_is_an_agents() -> None:
    gateway = FakeGateway()
    async with McpClient(server_for(gateway)) as client:
        refused = await client.call_tool("list_attention", {})
    assert refused.is_error and "forbidden" in json.dumps(refused.structured_content)
    assert [r.url.path for r in gateway.requests] == ["/v1/whoami"]  # the inbox was not read


async def test_list_attention_answers_an_operator_key() -> None:
    gateway = FakeGateway(role="operator")
    async with McpClient(server_for(gateway)) as client:
        listed = await client.call_tool("list_attention", {})
    assert not listed.is_error and listed.structured_content == {"items": []}
    assert [r.url.path for r in gateway.requests] == ["/v1/whoami", "/v1/attention"]


def test_next_action_names_the_mcp_tool_unless_the_gateway_did() -> None:
    assert with_tool(op("op_1", done=False))["next_action"]["tool"] == "wait_for_operation"
    named = op("op_1", done=False, next_action={"call": "GET /x", "tool": "mine"})
    assert with_tool(named)["next_action"]["tool"] == "mine"
    attention = op("op_1", done=True, next_action={"call": "GET /v1/attention"})
    assert with_tool(attention)["next_action"]["tool"] == "list_attention"


async def test_what_the_api_would_refuse_is_refused_with_its_code_and_nothing_is_sent() -> None:
    gateway = FakeGateway()
    start = {"provider": "mock", "kind": "report", "idempotency_key": "k-1"}
    async with McpClient(server_for(gateway)) as client:
        # (NaN cannot pass the in-memory transport: test_mcp_http sends it over HTTP.)
        nul = await client.call_tool("start_operation", {**start, "input": {"x": ["a\x00b"]}})
        cafe = await client.call_tool(
            "start_operation", {**start, "idempotency_key": "café", "input": {}}
        )
        paths = [
            await client.call_tool(tool, {"operation_id": forged})
            for tool in ("get_operation", "wait_for_operation", "get_result", "cancel_operation")
            for forged in ("op_01JD7ZQ6R4X0P8V6N1K2M3B4D0/events", "../attention", "op_nope")
        ]
    assert nul.is_error and nul.structured_content is not None
    assert nul.structured_content["error"]["code"] == "invalid_value"
    assert nul.structured_content["error"]["details"] == {"reason": "nul", "pointer": "/input/x/0"}
    assert cafe.is_error and cafe.structured_content is not None
    assert cafe.structured_content["error"]["code"] == "idempotency_key_invalid"
    for refused in paths:
        assert refused.is_error and refused.structured_content is not None
        assert refused.structured_content["error"]["code"] == "operation_not_found"
    assert gateway.requests == []  # none of it reached the REST API


OPERATION_TOOLS = ("start_operation", "get_operation", "wait_for_operation", "cancel_operation")


async def test_every_tool_declares_its_output_and_the_stop_rules() -> None:
    async with McpClient(server_for(FakeGateway())) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for name, tool in tools.items():
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
    for name in OPERATION_TOOLS:
        words = tools[name].description or ""
        assert "Read `done` first" in words, name
        assert "Report success only when `outcome` is `succeeded`" in words, name
        assert "a human is needed: stop, tell the user" in words, name
        assert "do not retry" in words, name
        schema = tools[name].output_schema or {}
        assert {"operation_id", "done", "status", "message"} <= set(schema["required"]), name
    start = tools["start_operation"].description or ""
    assert "`done` may already be true" in start and "NOT finished" not in start


async def test_a_409_tool_error_has_the_verdict_at_the_top() -> None:
    gateway = FakeGateway()
    async with McpClient(server_for(gateway)) as client:
        refused = await client.call_tool(
            "cancel_operation", {"operation_id": "op_01JD7ZQ6R4X0P8V6N1K2M3B4D0"}
        )
    top = refused.structured_content or {}
    assert refused.is_error and top["done"] is True
    assert top["message"] == gateway.done[0]["message"] == top["operation"]["message"]
    assert top["next_action"] == top["operation"]["next_action"]


async def test_decide_approval_is_for_operators_and_posts_the_decision() -> None:
    agent = FakeGateway()
    args = {"operation_id": "op_01JD7ZQ6R4X0P8V6N1K2M3B4D0", "decision": "deny", "reason": "no"}
    async with McpClient(server_for(agent)) as client:
        refused = await client.call_tool("decide_approval", args)
    assert refused.is_error and "forbidden" in json.dumps(refused.structured_content)
    assert [r.url.path for r in agent.requests] == ["/v1/whoami"]  # nothing was decided

    operator = FakeGateway(role="operator")
    async with McpClient(server_for(operator)) as client:
        await client.call_tool("decide_approval", args)
    posted = [r for r in operator.requests if r.method == "POST"]
    assert [r.url.path for r in posted] == ["/v1/operations/op_01JD7ZQ6R4X0P8V6N1K2M3B4D0/deny"]
    assert json.loads(posted[0].content) == {"reason": "no"}


async def test_an_unknown_or_misspelled_argument_is_refused_naming_what_is_accepted() -> None:
    gateway = FakeGateway()
    op_id = "op_01JD7ZQ6R4X0P8V6N1K2M3B4D0"
    async with McpClient(server_for(gateway)) as client:
        typo = await client.call_tool("wait_for_operation", {"operation_id": op_id, "timeout": 1})
        extra = await client.call_tool("get_operation", {"operation_id": op_id, "verbose": True})
        too_long = await client.call_tool(
            "wait_for_operation", {"operation_id": op_id, "timeout_seconds": 600}
        )
        negative = await client.call_tool("get_errors", {"operation_id": op_id, "limit": 0})
        fine = await client.call_tool("get_operation", {"operation_id": op_id})
    assert typo.is_error and typo.structured_content is not None
    error = typo.structured_content["error"]
    assert error["code"] == "unknown_argument"
    accepted = ["operation_id", "timeout_seconds"]
    assert error["details"] == {"unknown": ["timeout"], "accepted": accepted}
    assert "did you mean 'timeout_seconds'" in error["message"]
    assert "'timeout'" in typo.content[0].text  # type: ignore[union-attr]
    assert extra.is_error and extra.structured_content is not None
    assert extra.structured_content["error"]["details"]["unknown"] == ["verbose"]
    for out_of_range, name in ((too_long, "timeout_seconds"), (negative, "limit")):
        assert out_of_range.is_error, out_of_range
        assert name in out_of_range.content[0].text  # type: ignore[union-attr]
    assert not fine.is_error
    # Only the good call reached the REST API: nothing was called for the refused ones.
    assert [r.url.path for r in gateway.requests] == [f"/v1/operations/{op_id}"]
