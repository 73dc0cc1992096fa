"""`/metrics` after scenarios run through HTTP: the counters move, the gauges tell the truth."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.operations import repository as repo
from app.operations.driver.steps import step
from app.operations.driver.write import apply
from app.operations.repository import Fence
from tests.conftest import Gateway
from tests.support.servers import serve_app

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


async def scrape(gw: Gateway) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = await gw.http.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    out = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(m: dict[Any, float], name: str, **labels: str) -> float:
    return m.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_a_scenario_moves_the_counters(gateway: Gateway) -> None:
    before = await scrape(gateway)
    op_id = (await gateway.start({"name": "slow", "polls": 2})).json()["operation_id"]
    assert (await gateway.run_until_done(op_id))["state"] == "succeeded"
    after = await scrape(gateway)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("jobgate_transitions_total", from_state="none", to="create_pending") == 1
    assert delta("jobgate_transitions_total", from_state="create_pending", to="accepted") == 1
    assert delta("jobgate_transitions_total", from_state="result_collecting", to="succeeded") == 1
    calls = dict(provider="mock", outcome="ok")
    assert delta("jobgate_provider_calls_total", operation="create", **calls) == 1
    assert delta("jobgate_provider_calls_total", operation="status", **calls) >= 2
    assert delta("jobgate_provider_calls_total", operation="result", **calls) == 1
    seconds = dict(provider="mock", operation="create")
    assert delta("jobgate_provider_call_seconds_count", **seconds) == 1
    assert delta("jobgate_provider_call_seconds_sum", **seconds) > 0
    assert delta("jobgate_poll_lateness_seconds_count") >= 2  # each observer claim
    text = (await gateway.http.get("/metrics")).text
    for name in ("jobgate_fenced_writes", "jobgate_lease_takeovers", "jobgate_waits_in_flight",
                 "jobgate_callback_deliveries", "jobgate_refused_transitions"):  # fmt: skip
        assert f"# HELP {name}" in text, name


async def test_gauges_read_the_database_at_scrape_time(gateway: Gateway) -> None:
    running = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    broken = (await gateway.start({"name": "corrupt_result"})).json()["operation_id"]
    await gateway.tick(61)
    await gateway.run_until_done(broken)
    m = await scrape(gateway)
    assert value(m, "jobgate_operations", state="observing") == 1
    assert value(m, "jobgate_operations", state="result_validation_failed") == 1
    assert value(m, "jobgate_operations", state="create_pending") == 0  # listed, at zero
    assert ("jobgate_operations", (("state", "succeeded"),)) not in m  # terminal: a counter
    assert value(m, "jobgate_needs_attention") == 1

    # The gauge counts what the attention inbox lists: a result whose items all
    # succeeded is not waiting for anyone, one with failed items is.
    clean = (await gateway.start({"name": "fast"})).json()["operation_id"]
    partial = (await gateway.start({"name": "partial_results", "failed": 2})).json()["operation_id"]
    await gateway.run_until_done(clean)
    await gateway.run_until_done(partial)
    inbox = (await gateway.http.get("/v1/attention")).json()["items"]
    assert {i["operation"]["operation_id"] for i in inbox} == {broken, partial}
    assert value(await scrape(gateway), "jobgate_needs_attention") == 2

    # A held /wait is counted while it is open, and no longer once it returns.
    waiting = asyncio.create_task(gateway.http.get(f"/v1/operations/{running}/wait?timeout=30"))
    for _ in range(1000):
        await asyncio.sleep(0)
        if value(await scrape(gateway), "jobgate_waits_in_flight") == 1:
            break
    else:
        raise AssertionError("the wait was never counted")
    r = await gateway.http.post(f"/v1/operations/{running}/cancel", json={"reason": "test"})
    assert r.status_code == 202
    await gateway.run_until_done(running)
    assert (await waiting).json()["done"] is True
    assert value(await scrape(gateway), "jobgate_waits_in_flight") == 0


async def test_takeovers_and_fenced_writes_are_counted(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    await gateway.tick(61)
    before = await scrape(gateway)
    stale = dataclasses.replace(gateway.ctx, worker_id="stale-A")
    gateway.clock.advance(120)
    async with stale.db.transaction() as session:
        [snapshot] = await repo.claim_due(
            session, now=stale.now(), owner="stale-A", lease_seconds=30, limit=10, skip_locked=False
        )
    decision = await step(stale, snapshot, None)
    await gateway.tick(31)  # stale-A's lease lapsed: the gateway's observer takes over
    assert not await apply(stale, snapshot, Fence("stale-A", snapshot.lease_token), decision)
    after = await scrape(gateway)
    assert (
        value(after, "jobgate_lease_takeovers_total")
        - value(before, "jobgate_lease_takeovers_total")
        == 1
    )
    assert (
        value(after, "jobgate_fenced_writes_total") - value(before, "jobgate_fenced_writes_total")
        == 1
    )
    assert op_id


async def test_traceparent_from_the_agent_reaches_the_provider(gateway: Gateway) -> None:
    parent = f"00-{TRACE}-00f067aa0ba902b7-01"
    r = await gateway.http.post(
        "/v1/operations",
        json={"provider": "mock", "kind": "report", "input": {"scenario": {"name": "fast"}}},
        headers={"Idempotency-Key": "tp-1", "traceparent": parent},
    )
    body = r.json()
    assert body["trace_id"] == f"tr_{TRACE}"
    history = (await gateway.http.get(f"/v1/operations/{body['operation_id']}/history")).json()
    assert history["items"][0]["data"]["traceparent"] == parent
    sent = [h["data"]["request_headers"] for h in history["items"] if h["kind"] == "exchange"]
    assert sent
    for headers in sent:
        lowered = {k.lower(): v for k, v in headers.items()}
        version, trace, span, flags = lowered["traceparent"].split("-")
        assert (version, trace, flags) == ("00", TRACE, "01") and span != "00f067aa0ba902b7"

    # Malformed (all-zero trace id): ignored, a fresh trace, still 202.
    bad = await gateway.http.post(
        "/v1/operations",
        json={"provider": "mock", "kind": "report", "input": {"scenario": {"name": "fast"}}},
        headers={"Idempotency-Key": "tp-2", "traceparent": f"00-{'0' * 32}-00f067aa0ba902b7-01"},
    )
    assert bad.status_code == 202 and bad.json()["trace_id"] != f"tr_{'0' * 32}"


@pytest.mark.parametrize("gateway_settings", [{"allow_private_callbacks": True}])
async def test_callback_deliveries_are_counted_by_outcome(gateway: Gateway) -> None:
    seen: list[int] = []

    async def hook(request: Request) -> JSONResponse:
        seen.append(1)
        return JSONResponse({"error": "not now"} if len(seen) == 1 else {"ok": True},
                            status_code=500 if len(seen) == 1 else 200)  # fmt: skip

    app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    with serve_app(app) as url:
        before = await scrape(gateway)
        r = await gateway.start({"name": "fast"}, callback_url=f"{url}/hook")
        await gateway.run_until_done(r.json()["operation_id"])
        callbacks = gateway.app.state.callbacks
        assert await callbacks.tick() == 1  # 500: retry later
        gateway.clock.advance(3600)
        assert await callbacks.tick() == 1  # delivered
        after = await scrape(gateway)
    for outcome in ("retry", "delivered"):
        name = "jobgate_callback_deliveries_total"
        assert value(after, name, outcome=outcome) - value(before, name, outcome=outcome) == 1
