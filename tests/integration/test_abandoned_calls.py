"""A client that gives up takes its work with it: abandoned MCP tool calls and /wait calls
stop their database watchers at once, not when their timeout ends; an id that is a path
(`op_.../events`) never reaches another route through an MCP tool; and `GET /mcp` opens
no stream.

Against `jobgate serve` as a process: the pollers are counted by its own gauges on
/metrics (`jobgate_waits_in_flight`, `jobgate_event_streams_open`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.support.agent_stack import LONG_DEADLINES, agent_env, call, gateway, mcp_session
from tests.support.timing import QUICK_S, budget

HELD_S = 50  # what each abandoned call asked to hold for
GIVE_UP_S = 0.5  # when the client stops reading


@pytest.fixture(scope="module")
def gateway_url(
    module_database_url: str, mock_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("abandon-gw")
    with gateway(agent_env(module_database_url, mock_url, tmp), tmp / "gw.log") as url:
        yield url


def gauge(url: str, name: str) -> float:
    text = httpx2.get(f"{url}/metrics", timeout=5).text
    [line] = [ln for ln in text.splitlines() if ln.startswith(f"{name} ")]
    return float(line.split()[1])


def settles_at_zero(url: str, name: str) -> bool:
    ends = time.monotonic() + budget(QUICK_S)
    while time.monotonic() < ends:
        if gauge(url, name) == 0:
            return True
        time.sleep(0.05)
    return False


def running_operation(url: str) -> str:
    r = httpx2.post(
        f"{url}/v1/operations",
        json={
            "provider": "mock",
            "kind": "report",
            "input": {"scenario": {"name": "never_finishes"}},
            "deadlines": LONG_DEADLINES,
        },
        headers={"Idempotency-Key": uuid.uuid4().hex},
        timeout=10,
    )
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC tools/call, as an MCP client posts it (stateless: no session)."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def abandon(url: str, method: str, path: str, **kw: Any) -> None:
    """Send the request, read nothing for GIVE_UP_S, then close the connection."""
    timeout = httpx2.Timeout(10.0, read=GIVE_UP_S)
    with pytest.raises(httpx2.ReadTimeout), httpx2.Client(timeout=timeout) as client:
        client.request(method, f"{url}{path}", **kw)


def test_abandoned_mcp_waits_stop_watching_when_the_client_goes(gateway_url: str) -> None:
    op_id = running_operation(gateway_url)
    for _ in range(5):
        args = {"operation_id": op_id, "timeout_seconds": HELD_S}
        body = tool_call("wait_for_operation", args)
        abandon(gateway_url, "POST", "/mcp", json=body, headers=MCP_HEADERS)
    assert settles_at_zero(gateway_url, "jobgate_waits_in_flight")


def test_abandoned_rest_waits_stop_watching_when_the_client_goes(gateway_url: str) -> None:
    op_id = running_operation(gateway_url)
    for _ in range(5):
        abandon(gateway_url, "GET", f"/v1/operations/{op_id}/wait", params={"timeout": HELD_S})
    assert settles_at_zero(gateway_url, "jobgate_waits_in_flight")


async def test_an_id_that_is_a_path_reaches_no_other_route(gateway_url: str) -> None:
    op_id = running_operation(gateway_url)
    async with mcp_session(gateway_url) as client:
        for forged in (f"{op_id}/events", f"{op_id}/wait", "../attention", f"{op_id}%2Fevents"):
            got = await call(client, "get_operation", operation_id=forged)
            assert got.is_error, forged
            assert (got.structured_content or {})["error"]["code"] == "operation_not_found"
        real = await call(client, "get_operation", operation_id=op_id)
        assert not real.is_error
    assert gauge(gateway_url, "jobgate_event_streams_open") == 0


def test_get_mcp_opens_no_stream(gateway_url: str) -> None:
    r = httpx2.get(
        f"{gateway_url}/mcp", headers={"Accept": "text/event-stream"}, timeout=budget(QUICK_S)
    )
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert r.json()["error"]["code"] == "method_not_allowed"
