"""Honest cancellation: intent first, one provider cancel by the lease owner, proof of the end."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from app.observer.worker import Observer
from tests.conftest import Gateway


async def _transitions(gw: Gateway, op_id: str) -> list[str]:
    items = (await gw.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    return [i["to_state"] for i in items if i["kind"] == "transition"]


async def _job(gw: Gateway, op_id: str) -> tuple[str, dict[str, Any]]:
    token = await gw.token_of(op_id)
    stats = gw.stats(token)
    job = stats["jobs_by_token"][token][0]
    return job, stats["jobs"][job]


async def _cancel(gw: Gateway, op_id: str, reason: str = "user asked") -> dict[str, Any]:
    r = await gw.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": reason})
    assert r.status_code == 202, r.text
    return dict(r.json())


async def test_cancel_race_ends_succeeded_and_says_the_cancel_came_too_late(
    gateway: Gateway,
) -> None:
    op_id = (await gateway.start({"name": "cancel_race", "polls": 5})).json()["operation_id"]
    await gateway.tick(61)  # observing; one running poll
    body = await _cancel(gateway, op_id)
    assert body["status"] == "cancelling" and body["done"] is False
    assert "A cancel of the report job was REQUESTED" in body["message"]
    assert "is IN PROGRESS" in body["message"] and "KEEP WAITING" in body["message"]
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "succeeded" and final["result"] is not None
    assert "SUCCEEDED before the provider acted on the request to stop it" in final["message"]
    path = await _transitions(gateway, op_id)
    assert path[-4:] == ["cancel_requested", "cancelling", "result_collecting", "succeeded"]


async def test_cancelled_only_after_the_provider_confirms(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    await gateway.tick(61)
    await _cancel(gateway, op_id)
    await gateway.tick(0)  # the owner sends the cancel
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["state"] == "cancelling" and body["status"] == "cancelling"
    _, job = await _job(gateway, op_id)
    assert job["cancel_calls"] == 1
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "cancelled" and final["status"] == "cancelled"
    assert "it was CANCELLED at the provider" in final["message"]


async def test_unconfirmed_cancel_needs_attention(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "cancel_ignored"})).json()["operation_id"]
    await gateway.tick(61)
    await _cancel(gateway, op_id)
    final = await gateway.run_until_done(op_id, step=61)
    assert final["state"] == "cancellation_unconfirmed"
    assert final["status"] == "needs_attention"
    assert final["error"]["details"]["remote_job_id"] == final["remote_job_id"]
    inbox = (await gateway.http.get("/v1/attention")).json()["items"]
    assert [i["operation"]["operation_id"] for i in inbox] == [op_id]
    assert "cancel" in inbox[0]["why"]


async def test_one_provider_cancel_despite_concurrent_requests_and_two_observers(
    gateway: Gateway,
) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    await gateway.tick(61)
    rs = await asyncio.gather(
        *(
            gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": f"r{i}"})
            for i in range(3)
        )
    )
    assert {r.status_code for r in rs} == {202}
    second = Observer(dataclasses.replace(gateway.ctx, worker_id="observer-2"))
    for _ in range(6):
        await asyncio.gather(
            gateway.app.state.observer.run(until_idle=True), second.run(until_idle=True)
        )
        gateway.clock.advance(5)
    _, job = await _job(gateway, op_id)
    assert job["cancel_calls"] == 1
    intents = [
        i
        for i in (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
        if i["kind"] == "intent"
    ]
    assert len(intents) == 1


async def test_cancel_before_the_job_id_is_known_is_applied_once_learned(
    gateway: Gateway,
) -> None:
    r = await gateway.start({"name": "lost_create_response"})
    op_id = r.json()["operation_id"]
    assert r.json()["state"] == "create_unknown"
    body = await _cancel(gateway, op_id, "changed my mind")
    assert body["status"] == "cancelling"
    final = await gateway.run_until_done(op_id)
    assert final["state"] in ("cancelled", "succeeded")  # `fast` may finish first
    path = await _transitions(gateway, op_id)
    assert "accepted" in path and "cancel_requested" in path
    assert path.index("accepted") < path.index("cancel_requested")


async def test_cancelling_a_done_operation_is_409(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "sync"})).json()["operation_id"]
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "late"})
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "operation_done"
