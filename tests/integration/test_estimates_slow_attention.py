"""With JOBGATE_ATTENTION_SLOW, the attention inbox lists a job running longer than 90%
of similar jobs, with why; the estimate is read once per cache period, not per body, and
a success in this process joins it without a read."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import update

from app.operations.repository.tables import OPS
from tests.conftest import Gateway


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"estimate_min_jobs": 2, "estimate_cache_seconds": 3600.0, "attention_slow": True}


async def _finish(gateway: Gateway, polls: int) -> None:
    op_id = (await gateway.start({"name": "slow", "polls": polls})).json()["operation_id"]
    assert (await gateway.run_until_done(op_id))["outcome"] == "succeeded"


async def test_slow_job_listed_and_estimate_cached(gateway: Gateway) -> None:
    await _finish(gateway, 1)
    await _finish(gateway, 2)
    op_id = (await gateway.start({"name": "slow", "polls": 60})).json()["operation_id"]
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["estimate"]["based_on"] == 2
    # Another process's success (written here as that process would) is not read again
    # within the cache period: a body costs no query for it.
    async with gateway.ctx.db.transaction() as txn:
        await txn.execute(
            update(OPS)
            .where(OPS.c.state == "succeeded")
            .values(updated_at=gateway.clock.now() + timedelta(seconds=9999))
        )
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["estimate"]["based_on"] == 2 and body["estimate"]["p90_seconds"] < 9999
    # A success in this process is added to the sample at once, still without a read
    # (the other process's change is still not seen).
    await _finish(gateway, 1)
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["estimate"]["based_on"] == 3 and body["estimate"]["p90_seconds"] < 9999
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    items = (await gateway.http.get("/v1/attention")).json()["items"]
    assert op_id not in [i["operation"]["operation_id"] for i in items]

    gateway.clock.advance(body["estimate"]["p90_seconds"] + 1)
    items = (await gateway.http.get("/v1/attention")).json()["items"]
    slow = [i for i in items if i["operation"]["operation_id"] == op_id]
    assert len(slow) == 1, items
    assert slow[0]["why"].startswith("running longer than 90% of similar jobs")
    assert "longer than 90% of similar jobs" in slow[0]["operation"]["message"]
