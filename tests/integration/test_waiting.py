"""Server-side wait and SSE: one call, an honest outcome, no load multiplied by waiters."""

from __future__ import annotations

import asyncio
import json
import math
import time

from app.operations.services.waiting import REREAD_SECONDS
from tests.conftest import Gateway


async def test_wait_returns_succeeded_with_the_result(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "slow", "polls": 2})).json()["operation_id"]
    waiter = asyncio.create_task(
        gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 30})
    )
    for _ in range(20):
        await gateway.tick(61)
        if waiter.done():
            break
    body = (await waiter).json()
    assert body["outcome"] == "succeeded" and body["done"] is True
    assert body["result"] is not None


async def test_wait_outcomes_for_failure_and_attention(gateway: Gateway) -> None:
    failed = (await gateway.start({"name": "reject"})).json()["operation_id"]
    r = await gateway.http.get(f"/v1/operations/{failed}/wait", params={"timeout": 1})
    assert r.json()["outcome"] == "failed"
    bad = (await gateway.start({"name": "corrupt_result"})).json()["operation_id"]
    await gateway.run_until_done(bad)
    r = await gateway.http.get(f"/v1/operations/{bad}/wait", params={"timeout": 1})
    assert r.json()["outcome"] == "needs_attention"


async def test_many_waiters_share_one_reader(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "slow", "polls": 3})).json()["operation_id"]
    waiters = [
        asyncio.create_task(
            gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 30})
        )
        for _ in range(100)
    ]
    await asyncio.sleep(0)  # let them register
    for _ in range(30):
        await gateway.tick(61)
        await asyncio.sleep(0)
        if all(w.done() for w in waiters):
            break
    bodies = [(await w).json() for w in waiters]
    assert {b["outcome"] for b in bodies} == {"succeeded"}
    # One watcher re-read per change, not one per waiter per change.
    assert gateway.app.state.waits.total_reads < 20
    token = await gateway.token_of(op_id)
    job = gateway.stats(token)["jobs_by_token"][token][0]
    assert gateway.stats(token)["jobs"][job]["status_calls"] == 4  # waiters add no polls


async def test_polls_that_change_nothing_do_not_wake_the_shared_reader(gateway: Gateway) -> None:
    """Only what may be the end is re-read: three "still running" polls and the move to
    result collection (each announced as not done) cost the waiters no read."""
    op_id = (await gateway.start({"name": "slow", "polls": 3})).json()["operation_id"]
    waiter = asyncio.create_task(
        gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 30})
    )
    await asyncio.sleep(0)
    reads, started = gateway.app.state.waits.total_reads, time.monotonic()
    for _ in range(30):
        await gateway.tick(61)
        await asyncio.sleep(0)
        if waiter.done():
            break
    assert (await waiter).json()["outcome"] == "succeeded"
    # The first read, the one at the end (a local publish, and on PostgreSQL the NOTIFY
    # of the same commit), and the timed re-reads (one per REREAD_SECONDS).
    timed = math.ceil((time.monotonic() - started) / REREAD_SECONDS)
    assert gateway.app.state.waits.total_reads - reads <= 3 + timed


async def test_wait_timeout_is_not_success(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    r = await gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 0.05})
    body = r.json()
    assert body["outcome"] == "timed_out" and body["done"] is False
    assert "is IN PROGRESS" in body["message"] and op_id in body["message"]


def _events(text: str) -> list[dict[str, str]]:
    out = []
    for block in text.replace("\r\n", "\n").strip().split("\n\n"):
        ev: dict[str, str] = {}
        for line in block.split("\n"):
            if ":" in line and not line.startswith(":"):
                k, v = line.split(":", 1)
                ev[k] = v.strip()
        if ev:
            out.append(ev)
    return out


async def test_sse_streams_every_transition_then_closes(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "sync"})).json()["operation_id"]
    r = await gateway.http.get(f"/v1/operations/{op_id}/events")
    assert r.headers["content-type"].startswith("text/event-stream")
    events = _events(r.text)
    transitions = [
        json.loads(e["data"])["to_state"] for e in events if e.get("event") == "transition"
    ]
    assert transitions == ["create_pending", "result_collecting", "succeeded"]
    history = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    streamed = [json.loads(e["data"])["at"] for e in events if e.get("event") == "transition"]
    assert streamed == [h["at"] for h in history if h["kind"] == "transition"]  # same form
    assert all(at.endswith("Z") for at in streamed)
    assert events[-1]["event"] == "done"
    assert json.loads(events[-1]["data"])["status"] == "succeeded"
    # Resumable: after the second event only the later ones come again.
    second = [e for e in events if "id" in e][1]["id"]
    again = _events(
        (
            await gateway.http.get(
                f"/v1/operations/{op_id}/events", headers={"Last-Event-ID": second}
            )
        ).text
    )
    ids = [int(e["id"]) for e in again if "id" in e]
    assert ids and min(ids) > int(second)
