"""Agent contract v2 through HTTP: one `outcome` on every body, errors about an
operation carry its body, `next_action` names MCP tools only when MCP is on, and the
caller can ask who it is."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.callbacks.outbox import OUTBOX
from tests.conftest import Gateway
from tests.integration.test_waiting import _events


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"allow_private_callbacks": True}  # the callback is only enqueued, never sent


PARTIAL = {"name": "partial_results", "processed": 20, "failed": 3, "polls": 1}


async def _every_body(gateway: Gateway, op_id: str) -> dict[str, Any]:
    """The operation as each route renders it."""
    http = gateway.http
    listed = (await http.get("/v1/operations", params={"limit": 200})).json()["items"]
    events = _events((await http.get(f"/v1/operations/{op_id}/events")).text)
    return {
        "get": (await http.get(f"/v1/operations/{op_id}")).json(),
        "wait": (await http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 0})).json(),
        "list": next(o for o in listed if o["operation_id"] == op_id),
        "sse": json.loads(events[-1]["data"]),
    }


@pytest.mark.parametrize(
    ("scenario", "outcome"),
    [
        ({"name": "reject"}, "failed"),
        ({"name": "sync"}, "succeeded"),
        (PARTIAL, "completed_with_errors"),
        ({"name": "corrupt_result"}, "needs_attention"),
    ],
)
async def test_outcome_is_the_same_on_every_body(
    gateway: Gateway, scenario: dict[str, Any], outcome: str
) -> None:
    created = await gateway.start(scenario, callback_url="http://127.0.0.1:9/hook")
    assert created.status_code == 202  # even when `done` is already true (reject, sync)
    op_id = created.json()["operation_id"]
    if not created.json()["done"]:
        assert created.json()["outcome"] is None
        await gateway.run_until_done(op_id)
    bodies = await _every_body(gateway, op_id)
    async with gateway.ctx.db.transaction() as session:
        row = (await session.execute(OUTBOX.select().where(OUTBOX.c.operation_id == op_id))).one()
    bodies["callback"] = row.payload["data"]
    assert {name: b["outcome"] for name, b in bodies.items()} == dict.fromkeys(bodies, outcome)
    assert all(b["done"] is True for b in bodies.values())


async def test_outcome_is_null_while_running_and_a_wait_says_timed_out(gateway: Gateway) -> None:
    created = (await gateway.start({"name": "never_finishes"})).json()
    op_id = created["operation_id"]
    assert created["outcome"] is None and created["done"] is False
    await gateway.tick()
    assert (await gateway.http.get(f"/v1/operations/{op_id}")).json()["outcome"] is None
    waited = await gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 0})
    assert waited.json()["outcome"] == "timed_out"


async def test_a_cancel_of_a_done_operation_says_where_it_stands(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "sync"})).json()["operation_id"]
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "late"})
    assert r.status_code == 409
    body = r.json()
    assert body["error"]["code"] == "operation_done"
    op = body["operation"]
    assert op["operation_id"] == op_id and op["done"] is True and op["outcome"] == "succeeded"
    assert op["next_action"]["call"] == f"GET /v1/operations/{op_id}/result"
    assert "SUCCEEDED" in op["message"]


async def test_a_result_not_ready_carries_the_operation(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    r = await gateway.http.get(f"/v1/operations/{op_id}/result")
    assert r.status_code == 409 and r.json()["error"]["code"] == "result_not_available"
    op = r.json()["operation"]
    assert op["done"] is False and op["outcome"] is None
    assert op["next_action"]["call"] == f"GET /v1/operations/{op_id}/wait"


async def test_a_resolve_that_does_not_fit_carries_the_operation(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "sync"})).json()["operation_id"]
    decision = {"decision": "abandon", "reason": "test"}
    r = await gateway.http.post(f"/v1/operations/{op_id}/resolve", json=decision)
    assert r.status_code == 409 and r.json()["error"]["code"] == "not_needing_attention"
    assert r.json()["operation"]["outcome"] == "succeeded"


async def test_an_unknown_operation_is_a_bare_404(gateway: Gateway) -> None:
    r = await gateway.http.post("/v1/operations/op_nope/cancel", json={})
    assert r.status_code == 404 and "operation" not in r.json()


async def test_whoami_names_the_caller_and_its_role(gateway: Gateway) -> None:
    me = (await gateway.http.get("/v1/whoami")).json()
    assert me == {"principal": "dev", "role": "admin", "is_operator": True}


async def test_next_action_names_the_mcp_tool_when_mcp_is_on(gateway: Gateway) -> None:
    body = (await gateway.start({"name": "never_finishes"})).json()
    assert body["next_action"]["tool"] == "wait_for_operation"
    assert "wait_for_operation" in body["message"]


@pytest.fixture
async def no_mcp(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> AsyncIterator[Gateway]:
    from app.core.runtime.clock import FakeClock
    from app.main import create_app
    from tests.conftest import make_settings

    clock = FakeClock()
    app = create_app(
        make_settings(database_url, mock_url, tmp_path, mcp=False), clock=clock, run_observer=False
    )
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield Gateway(http=http, app=app, clock=clock, mock=mock_client)


async def test_without_mcp_bodies_name_only_rest_calls(no_mcp: Gateway) -> None:
    body = (await no_mcp.start({"name": "never_finishes"})).json()
    assert body["next_action"]["call"].endswith("/wait") and body["next_action"]["tool"] is None
    assert "wait_for_operation" not in body["message"] and "MCP" not in body["message"]
    assert (await no_mcp.http.post("/mcp", json={})).status_code == 404
