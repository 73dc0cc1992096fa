"""The MCP server at /mcp of a real gateway process, through the official MCP client.

What must survive a restart is an operation started through MCP, read back through MCP
from the restarted gateway, and on PostgreSQL from a second gateway process (the same
as a task: test_mcp_tasks.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support.agent_stack import (
    LONG_DEADLINES,
    agent_env,
    call,
    gateway,
    mcp_session,
    mock_job,
    text_of,
)


@pytest.fixture(scope="module")
def gateway_url(
    module_database_url: str, mock_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("mcp-gw")
    with gateway(agent_env(module_database_url, mock_url, tmp), tmp / "gw.log") as url:
        yield url


def start_args(scenario: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "provider": "mock",
        "kind": "report",
        "input": mock_job(scenario),
        "idempotency_key": uuid.uuid4().hex,
        **extra,
    }


async def test_tools_are_listed_with_the_idempotency_key_explained(gateway_url: str) -> None:
    async with mcp_session(gateway_url) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {
        "start_operation",
        "get_operation",
        "wait_for_operation",
        "cancel_operation",
        "get_result",
        "list_operations",
        "list_attention",
    } <= set(tools)
    start = tools["start_operation"]
    assert "idempotency_key" in start.input_schema["required"]
    assert "SAME key" in (start.description or "") and "twice" in (start.description or "")
    assert "`done` may already be true" in (start.description or "")
    assert start.output_schema is not None and "done" in start.output_schema["required"]


async def test_start_then_wait_succeeds_with_the_rest_body(gateway_url: str) -> None:
    async with mcp_session(gateway_url) as client:
        started = await call(client, "start_operation", **start_args({"name": "fast"}))
        assert not started.is_error, text_of(started)
        body = started.structured_content
        assert body is not None and body["operation_id"].startswith("op_")
        assert text_of(started) == body["message"]
        done = await call(
            client, "wait_for_operation", operation_id=body["operation_id"], timeout_seconds=20
        )
        result = await call(client, "get_result", operation_id=body["operation_id"])
    waited = done.structured_content
    assert waited is not None and waited["outcome"] == "succeeded" and waited["done"] is True
    assert "SUCCEEDED" in text_of(done)
    assert waited["next_action"]["tool"] == "get_result"
    assert result.structured_content is not None and result.structured_content["result"]


async def test_a_job_that_never_finishes_times_out_and_is_listed_later(gateway_url: str) -> None:
    async with mcp_session(gateway_url) as client:
        await call(client, "start_operation", **start_args({"name": "fast"}))
        started = await call(
            client,
            "start_operation",
            **start_args({"name": "never_finishes"}, deadlines=LONG_DEADLINES),
        )
        op_id = (started.structured_content or {})["operation_id"]
        waited = await call(client, "wait_for_operation", operation_id=op_id, timeout_seconds=0.3)
    body = waited.structured_content
    assert not waited.is_error and body is not None
    assert body["outcome"] == "timed_out" and body["done"] is False
    assert body["operation_id"] == op_id and op_id in text_of(waited)
    assert "is IN PROGRESS" in text_of(waited)

    async with mcp_session(gateway_url) as later:  # a new run of the agent
        listed = await call(later, "list_operations", limit=50)
        items = (listed.structured_content or {})["items"]
        ids = [op["operation_id"] for op in items]
        assert op_id in ids
        flags = [op["done"] for op in items]
        assert flags == sorted(flags), "in-flight operations come first"
        assert op_id in text_of(listed)
        await call(later, "cancel_operation", operation_id=op_id, reason="test done")


async def test_a_refusal_about_an_operation_carries_its_body(gateway_url: str) -> None:
    async with mcp_session(gateway_url) as client:
        started = await call(client, "start_operation", **start_args({"name": "sync"}))
        op_id = (started.structured_content or {})["operation_id"]
        refused = await call(client, "cancel_operation", operation_id=op_id)
        missing = await call(client, "get_operation", operation_id="op_nope")
    assert refused.is_error
    assert refused.structured_content is not None
    assert refused.structured_content["error"]["code"] == "operation_done"
    assert refused.structured_content["operation"]["outcome"] == "succeeded"
    assert "SUCCEEDED" in text_of(refused)
    assert missing.is_error and "operation_not_found" in text_of(missing)


async def test_an_operation_started_through_mcp_survives_a_gateway_restart(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    env = agent_env(database_url, mock_url, tmp_path)
    with gateway(env, tmp_path / "first.log") as url:
        async with mcp_session(url) as client:
            started = await call(
                client,
                "start_operation",
                **start_args({"name": "never_finishes"}, deadlines=LONG_DEADLINES),
            )
        op_id = (started.structured_content or {})["operation_id"]
    # The first gateway was SIGKILLed: no shutdown, no lease released.
    with gateway(env, tmp_path / "second.log") as url:
        async with mcp_session(url) as client:
            seen = await call(client, "get_operation", operation_id=op_id)
            assert not seen.is_error and (seen.structured_content or {})["done"] is False
            await call(client, "cancel_operation", operation_id=op_id, reason="after restart")
            ended = await call(client, "wait_for_operation", operation_id=op_id, timeout_seconds=20)
    assert (ended.structured_content or {})["outcome"] == "cancelled", text_of(ended)


@pytest.mark.postgres_only
async def test_a_second_gateway_process_reads_it_on_postgresql(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    env = agent_env(database_url, mock_url, tmp_path)
    with gateway(env, tmp_path / "a.log") as url_a, gateway(env, tmp_path / "b.log") as url_b:
        async with mcp_session(url_a) as on_a:
            started = await call(
                on_a, "start_operation", **start_args({"name": "slow", "polls": 3})
            )
        op_id = (started.structured_content or {})["operation_id"]
        async with mcp_session(url_b) as on_b:
            ended = await call(on_b, "wait_for_operation", operation_id=op_id, timeout_seconds=20)
            listed = await call(on_b, "list_operations")
    assert (ended.structured_content or {})["outcome"] == "succeeded", text_of(ended)
    assert op_id in [op["operation_id"] for op in (listed.structured_content or {})["items"]]


async def test_validation_goes_beside_input_and_a_failed_jobs_part_is_no_success(
    gateway_url: str,
) -> None:
    schema = {"type": "object", "required": ["no_such_member"]}
    async with mcp_session(gateway_url) as client:
        checked = await call(
            client,
            "start_operation",
            **start_args({"name": "fast"}, validation={"json_schema": schema}),
        )
        assert not checked.is_error, text_of(checked)
        op_id = (checked.structured_content or {})["operation_id"]
        judged = await call(client, "wait_for_operation", operation_id=op_id, timeout_seconds=20)
        failed = await call(
            client, "start_operation", **start_args({"name": "failed_partial", "polls": 0})
        )
        failed_id = (failed.structured_content or {})["operation_id"]
        await call(client, "wait_for_operation", operation_id=failed_id, timeout_seconds=20)
        kept = await call(client, "get_result", operation_id=failed_id)
    assert (judged.structured_content or {})["state"] == "result_validation_failed"
    assert not kept.is_error, text_of(kept)
    assert (kept.structured_content or {})["status"] == "failed"
    words = text_of(kept)
    assert "Report it only as the part of a failed job" in words, words
    assert "partial output" in words and "may report success" not in words.lower(), words
    assert "checked result" not in words


async def test_nan_input_and_a_non_ascii_key_are_refused_with_the_apis_codes(
    gateway_url: str,
) -> None:
    """Sent as raw JSON-RPC: `NaN` is a token Python's JSON reader takes, and no MCP client
    library would send it; the tool must answer with a code, not a generic failure."""
    args = '{"provider": "mock", "kind": "report", "input": {"x": NaN}, "idempotency_key": "k"}'
    cafe = '{"provider": "mock", "kind": "report", "input": {}, "idempotency_key": "caf\\u00e9"}'
    codes = []
    async with httpx2.AsyncClient(timeout=30) as http:
        for arguments in (args, cafe):
            body = (
                '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
                f'{{"name": "start_operation", "arguments": {arguments}}}}}'
            )
            r = await http.post(
                f"{gateway_url}/mcp",
                content=body,
                headers={
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                },
            )
            assert r.status_code == 200, r.text
            result = r.json()["result"]
            assert result["isError"] is True, result
            codes.append(result["structuredContent"]["error"]["code"])
    assert codes == ["invalid_value", "idempotency_key_invalid"]
