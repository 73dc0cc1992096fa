"""How long a job has run and will likely run, learned from finished jobs of its kind
(docs/agent-api.md, "How long"): null until enough finished, within the observed range
after, flagged past the p90, and read from the cache rather than per body."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from tests.conftest import Gateway

MIN_JOBS = 3


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"estimate_min_jobs": MIN_JOBS, "estimate_cache_seconds": 0.0}


async def _finish(gateway: Gateway, polls: int) -> dict[str, Any]:
    """One job of `polls` running reads, run to success; its done body."""
    op_id = (await gateway.start({"name": "slow", "polls": polls})).json()["operation_id"]
    body = await gateway.run_until_done(op_id)
    assert body["outcome"] == "succeeded", body
    return dict(body)


async def _body(gateway: Gateway, op_id: str) -> dict[str, Any]:
    return dict((await gateway.http.get(f"/v1/operations/{op_id}")).json())


def _at(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


async def test_no_estimate_until_enough_jobs_finished_then_within_their_range(
    gateway: Gateway,
) -> None:
    first = await gateway.start({"name": "slow", "polls": 50})
    op_id = first.json()["operation_id"]
    assert first.json()["elapsed_seconds"] == 0
    assert first.json()["estimate"] is None
    done = [await _finish(gateway, polls) for polls in (1, 3)]
    assert all(b["elapsed_seconds"] > 0 and b["estimate"] is None for b in done)
    body = await _body(gateway, op_id)  # two finished: fewer than the minimum, no guess
    assert body["elapsed_seconds"] > 0 and not body["done"]
    assert body["estimate"] is None
    assert body["estimated_seconds_left"] is None and body["expected_done_at"] is None
    assert "Similar jobs" not in body["message"]

    done.append(await _finish(gateway, 5))
    took = sorted(b["elapsed_seconds"] for b in done)
    waiting = await gateway.start({"name": "slow", "polls": 50})  # a new one, just started
    body = waiting.json()
    est = body["estimate"]
    assert est is not None and est["based_on"] == MIN_JOBS, body
    assert took[0] <= est["p50_seconds"] <= est["p90_seconds"] <= took[-1]
    assert est["p50_seconds"] == took[1]  # the median of three
    left = body["estimated_seconds_left"]
    assert left is not None and 0 < left <= took[-1]
    expected = (_at(body["expected_done_at"]) - gateway.clock.now()).total_seconds()
    assert abs(expected - left) < 1.0
    assert f"Similar jobs took about {est['p50_seconds']:g} seconds" in body["message"]
    assert "IN PROGRESS" in body["message"]


async def test_past_the_p90_the_message_says_it_runs_longer_than_most(gateway: Gateway) -> None:
    for polls in (1, 1, 2):
        await _finish(gateway, polls)
    op_id = (await gateway.start({"name": "slow", "polls": 60})).json()["operation_id"]
    body = await _body(gateway, op_id)
    assert body["estimate"] is not None and body["estimated_seconds_left"] is not None
    p90 = body["estimate"]["p90_seconds"]
    gateway.clock.advance(p90 + 1)
    body = await _body(gateway, op_id)
    assert not body["done"] and body["elapsed_seconds"] > p90
    assert body["estimated_seconds_left"] is None and body["expected_done_at"] is None
    assert "running for" in body["message"]
    assert "longer than 90% of similar jobs" in body["message"]
    assert "KEEP WAITING" in body["message"]
    # Off by default: a slow job is not listed in the attention inbox.
    items = (await gateway.http.get("/v1/attention")).json()["items"]
    assert op_id not in [i["operation"]["operation_id"] for i in items]


async def test_progress_percent_when_the_provider_reports_a_total(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "slow", "polls": 4})).json()["operation_id"]
    for _ in range(4):
        body = await _body(gateway, op_id)
        if body["progress"] and body["progress"]["completed"]:
            break
        await gateway.tick(5)
    prog = body["progress"]
    assert prog and prog["total"], body
    assert body["progress_percent"] == round(100 * prog["completed"] / prog["total"], 1)
