"""MCP with API keys (`JOBGATE_AUTH=keys`): roles and scoping are the REST ones, over
streamable HTTP and over stdio (`jobgate mcp --url ... --key-env ...`)."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client as McpClient
from mcp import StdioServerParameters

from tests.support.agent_stack import (
    agent_env,
    call,
    gateway,
    mcp_session,
    mint_keys,
    mock_job,
    text_of,
)

ROOT = Path(__file__).resolve().parents[2]
ROLES = {"agent-a": "agent", "agent-b": "agent", "ops": "operator"}


@pytest.fixture(scope="module")
def keyed(
    module_database_url: str, mock_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, dict[str, str]]]:
    """A gateway in keys mode and a key per name in ROLES."""
    tmp = tmp_path_factory.mktemp("mcp-keys")
    keys = mint_keys(module_database_url, ROLES)
    env = agent_env(module_database_url, mock_url, tmp, auth="keys")
    with gateway(env, tmp / "gw.log") as url:
        yield url, keys


def start_args(scenario: dict[str, Any]) -> dict[str, Any]:
    return {
        "provider": "mock",
        "kind": "report",
        "input": mock_job(scenario),
        "idempotency_key": uuid.uuid4().hex,
    }


async def test_an_agent_sees_only_its_own_operations(keyed: tuple[str, dict[str, str]]) -> None:
    url, keys = keyed
    async with mcp_session(url, keys["agent-a"]) as a:
        started = await call(a, "start_operation", **start_args({"name": "sync"}))
        assert not started.is_error, text_of(started)
        op_id = (started.structured_content or {})["operation_id"]
        assert not (await call(a, "get_operation", operation_id=op_id)).is_error
    async with mcp_session(url, keys["agent-b"]) as b:
        other = await call(b, "get_operation", operation_id=op_id)
        listed = await call(b, "list_operations")
    assert other.is_error and "operation_not_found" in text_of(other)
    assert op_id not in [op["operation_id"] for op in (listed.structured_content or {})["items"]]
    async with mcp_session(url, keys["ops"]) as ops:
        assert not (await call(ops, "get_operation", operation_id=op_id)).is_error


async def test_list_attention_is_for_operators_only(keyed: tuple[str, dict[str, str]]) -> None:
    url, keys = keyed
    async with mcp_session(url, keys["agent-a"]) as agent:
        await call(agent, "start_operation", **start_args({"name": "corrupt_result"}))
        refused = await call(agent, "list_attention")
    assert refused.is_error
    assert (refused.structured_content or {})["error"]["code"] == "forbidden"
    assert "403" in text_of(refused)
    async with mcp_session(url, keys["ops"]) as ops:
        inbox = await call(ops, "list_attention")
    assert not inbox.is_error and "need a human" in text_of(inbox)


async def test_a_call_without_a_key_is_refused_before_its_body_is_read(
    keyed: tuple[str, dict[str, str]],
) -> None:
    """HTTP 401 before the JSON-RPC body is parsed (app/auth/key_first.py), as for REST."""
    url, keys = keyed
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    for auth in ({}, {"Authorization": "Bearer jgk_" + "x" * 43}):
        r = httpx2.post(f"{url}/mcp", json=hello, headers={**accept, **auth}, timeout=30)
        assert r.status_code == 401, r.text
        assert r.json()["error"]["code"] == "unauthorized"
    r = httpx2.post(
        f"{url}/mcp",
        json=hello,
        headers={**accept, "Authorization": f"Bearer {keys['agent-a']}"},
        timeout=30,
    )
    assert r.status_code == 200, r.text


async def test_stdio_serves_the_same_tools_with_the_key_from_the_environment(
    keyed: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, keys = keyed
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.cli", "mcp", "--url", url, "--key-env", "AGENT_KEY"],
        env={"AGENT_KEY": keys["agent-a"]},
        cwd=str(ROOT),
    )
    async with McpClient(server) as client:
        started = await call(client, "start_operation", **start_args({"name": "fast"}))
        assert not started.is_error, text_of(started)
        op_id = (started.structured_content or {})["operation_id"]
        done = await call(client, "wait_for_operation", operation_id=op_id, timeout_seconds=20)
        attention = await call(client, "list_attention")
    assert (done.structured_content or {})["outcome"] == "succeeded", text_of(done)
    assert attention.is_error  # the key is an agent's


async def _misspelled_wait_is_refused(client: McpClient) -> None:
    """`timeout` for `timeout_seconds`: a tool error naming both, at once (never the
    default 30 s hold), and a value out of range the same; nothing waited."""
    started = await call(client, "start_operation", **start_args({"name": "never_finishes"}))
    op_id = (started.structured_content or {})["operation_id"]
    began = time.monotonic()
    typo = await call(client, "wait_for_operation", operation_id=op_id, timeout=1)
    too_long = await call(client, "wait_for_operation", operation_id=op_id, timeout_seconds=60)
    assert time.monotonic() - began < 10  # refused, not held
    assert typo.is_error, text_of(typo)
    error = (typo.structured_content or {})["error"]
    assert error["code"] == "unknown_argument"
    assert error["details"]["unknown"] == ["timeout"]
    assert error["details"]["accepted"] == ["operation_id", "timeout_seconds"]
    assert "did you mean 'timeout_seconds'" in text_of(typo)
    assert too_long.is_error and "timeout_seconds" in text_of(too_long)
    await call(client, "cancel_operation", operation_id=op_id)


async def test_a_misspelled_argument_is_refused_over_http(
    keyed: tuple[str, dict[str, str]],
) -> None:
    url, keys = keyed
    async with mcp_session(url, keys["agent-a"]) as client:
        await _misspelled_wait_is_refused(client)


async def test_a_misspelled_argument_is_refused_over_stdio(
    keyed: tuple[str, dict[str, str]],
) -> None:
    url, keys = keyed
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.cli", "mcp", "--url", url, "--key-env", "AGENT_KEY"],
        env={"AGENT_KEY": keys["agent-a"]},
        cwd=str(ROOT),
    )
    async with McpClient(server) as client:
        await _misspelled_wait_is_refused(client)
