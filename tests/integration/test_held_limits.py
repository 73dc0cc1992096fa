"""One key holds at most JOBGATE_MAX_HELD_PER_KEY waits and event streams open at once;
the next is refused (429 `too_many_held`, `Retry-After`) and other keys are not affected."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from app.auth import service as keys
from tests.conftest import Gateway

LIMIT = 2


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"auth": "keys", "max_held_per_key": LIMIT}


async def _key(gw: Gateway) -> dict[str, str]:
    _, key = await keys.create(gw.ctx.db, f"agent-{uuid.uuid4().hex[:6]}", "agent", gw.clock.now())
    return {"Authorization": f"Bearer {key}"}


async def _running(gw: Gateway, who: dict[str, str]) -> str:
    r = await gw.http.post(
        "/v1/operations",
        json={"provider": "mock", "kind": "report", "input": {"scenario": {"name": "slow"}}},
        headers={**who, "Idempotency-Key": uuid.uuid4().hex},
    )
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


async def test_a_key_past_its_holds_is_refused_and_others_are_not(gateway: Gateway) -> None:
    a, b = await _key(gateway), await _key(gateway)
    op_a, op_b = await _running(gateway, a), await _running(gateway, b)
    path = f"/v1/operations/{op_a}/wait"
    holds = [
        asyncio.create_task(gateway.http.get(path, params={"timeout": 60}, headers=a))
        for _ in range(LIMIT)
    ]
    await _until_held(gateway, LIMIT)

    refused = await gateway.http.get(path, params={"timeout": 60}, headers=a)
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["code"] == "too_many_held"
    assert refused.headers["retry-after"] == "1"
    stream = await gateway.http.get(f"/v1/operations/{op_a}/events", headers=a)
    assert stream.status_code == 429 and stream.json()["error"]["code"] == "too_many_held"
    read = await gateway.http.get(f"/v1/operations/{op_a}", headers=a)
    assert read.status_code == 200  # reads are never held, never refused

    other = await gateway.http.get(
        f"/v1/operations/{op_b}/wait", params={"timeout": 0.05}, headers=b
    )
    assert other.status_code == 200, other.text

    for task in holds:
        task.cancel()
    await asyncio.gather(*holds, return_exceptions=True)
    await _until_held(gateway, 0)
    again = await gateway.http.get(path, params={"timeout": 0.05}, headers=a)
    assert again.status_code == 200, again.text


async def _until_held(gw: Gateway, n: int) -> None:
    """Until `n` requests are held (the tasks above reach their wait in their own time)."""
    limits = gw.app.state.holds
    for _ in range(500):
        if limits.total() == n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never {n} held: {limits.total()}")
