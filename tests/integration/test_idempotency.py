"""Idempotency-Key semantics: one logical operation, one token, one remote job."""

from __future__ import annotations

import asyncio
import uuid

from tests.conftest import Gateway

BODY = {"provider": "mock", "kind": "report", "input": {"scenario": {"name": "slow"}}}


async def _count_ops(gw: Gateway) -> int:
    r = await gw.http.get("/v1/operations", params={"limit": 200})
    return len(r.json()["items"])


async def test_missing_key_is_400_and_tells_how_to_choose(gateway: Gateway) -> None:
    r = await gateway.http.post("/v1/operations", json=BODY)
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["code"] == "idempotency_key_required"
    assert "same key" in err["message"].lower()
    assert await _count_ops(gateway) == 0


async def test_replay_returns_same_operation_without_new_provider_call(gateway: Gateway) -> None:
    key = uuid.uuid4().hex
    first = await gateway.http.post("/v1/operations", json=BODY, headers={"Idempotency-Key": key})
    assert first.status_code == 202
    op_id = first.json()["operation_id"]
    token = await gateway.token_of(op_id)
    again = await gateway.http.post("/v1/operations", json=BODY, headers={"Idempotency-Key": key})
    assert again.status_code == 200
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json()["operation_id"] == op_id
    stats = gateway.stats(token)
    assert stats["creates_by_token"] == {token: 1}
    assert await _count_ops(gateway) == 1


async def test_same_key_different_input_is_422(gateway: Gateway) -> None:
    key = uuid.uuid4().hex
    await gateway.http.post("/v1/operations", json=BODY, headers={"Idempotency-Key": key})
    changed = {**BODY, "input": {"scenario": {"name": "slow", "polls": 9}}}
    r = await gateway.http.post("/v1/operations", json=changed, headers={"Idempotency-Key": key})
    assert r.status_code == 422
    assert r.json()["error"]["code"] == "idempotency_key_reused"
    assert await _count_ops(gateway) == 1


async def test_key_order_in_input_does_not_change_the_fingerprint(gateway: Gateway) -> None:
    key = uuid.uuid4().hex
    a = {
        "provider": "mock",
        "kind": "report",
        "input": {"x": 1, "scenario": {"name": "fast"}, "y": [1, 2]},
    }
    b = {
        "kind": "report",
        "input": {"y": [1, 2], "scenario": {"name": "fast"}, "x": 1.0},
        "provider": "mock",
    }
    r1 = await gateway.http.post("/v1/operations", json=a, headers={"Idempotency-Key": key})
    r2 = await gateway.http.post("/v1/operations", json=b, headers={"Idempotency-Key": key})
    assert r2.status_code == 200, r2.text
    assert r1.json()["operation_id"] == r2.json()["operation_id"]


async def test_concurrent_same_key_makes_one_operation_and_one_job(gateway: Gateway) -> None:
    key = uuid.uuid4().hex
    rs = await asyncio.gather(
        *(
            gateway.http.post("/v1/operations", json=BODY, headers={"Idempotency-Key": key})
            for _ in range(5)
        )
    )
    ids = {r.json()["operation_id"] for r in rs}
    assert len(ids) == 1
    assert sorted(r.status_code for r in rs).count(202) == 1
    op_id = ids.pop()
    assert len(gateway.jobs_for(op_id)) == 1
    token = await gateway.token_of(op_id)
    assert gateway.stats(token)["jobs_by_token"] == {
        token: [gateway.stats(token)["jobs_by_token"][token][0]]
    }
    assert gateway.stats(token)["creates_by_token"][token] == 1
