"""The bundled `anthropic_message_batches` profile driven end to end through the agent API.

The Message Batches fake (jobgate_fakes/providers/anthropic_batches, built from Anthropic's
Message Batches reference) runs on a real uvicorn server. Its knobs are the documented
request fields (batchwork.py): `params.model` starting with `fail` ends the request
`errored` with a `not_found_error`, `params.max_tokens` sets the hours (status reads) it
takes, and over the 24-hour window it ends `expired`. Anthropic honours no idempotency
key and shows nothing of ours back (single_create `none`); the fake counts every create
call and every call about a batch (`GET /_fake/stats`).
"""

from __future__ import annotations

from typing import Any

import httpx2

from tests.conftest import Gateway
from tests.integration.profiles.conftest import (
    KEY,
    STEP,
    ended_as,
    errors_of,
    fault,
    finish,
    history,
    never_success,
    summary_is,
)
from tests.integration.profiles.conftest import start as start_op
from tests.integration.profiles.lost_create import create, goes_to_a_person

NAME = "anthropic_message_batches"


def request(custom_id: str, model: str = "claude-x", max_tokens: int = 100) -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "params": {"model": model, "max_tokens": max_tokens, "messages": []},
    }


async def start(gateway: Gateway, *requests: dict[str, Any]) -> dict[str, Any]:
    made = await start_op(gateway, NAME, {"requests": list(requests)})
    assert made["guarantees"]["single_create"] == "none"
    return made


async def the_batch(fake: httpx2.AsyncClient) -> tuple[str, dict[str, int]]:
    """The one batch the fake made (it is reset before each test), and its call counters."""
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == 1
    [(job, calls)] = stats["jobs"].items()
    return job, calls


async def test_success_collects_and_validates_the_results(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, request("q1"), request("q2"))
    op_id = made["operation_id"]
    done = await finish(gateway, op_id)
    ended_as(done, "succeeded")
    assert done["remote_state"] == "ended" and done["error"] is None
    summary_is(done, processed=2, succeeded=2, failed=0, not_processed=0)
    r = await gateway.http.get(f"/v1/operations/{op_id}/result")
    assert r.status_code == 200, r.text
    result = r.json()
    assert sorted(line["custom_id"] for line in result["result"]) == ["q1", "q2"]
    assert {line["result"]["type"] for line in result["result"]} == {"succeeded"}
    assert result["sha256"] and result["size"] > 0
    assert (await errors_of(gateway, op_id)) == []
    job, calls = await the_batch(fake)
    assert done["remote_job_id"] == job and calls["results_calls"] == 1
    rows = await history(gateway, op_id)
    assert KEY not in str(rows) and KEY not in str(done)
    ops = [e["data"]["operation"] for e in rows if e["kind"] == "exchange"]
    assert ops.count("create") == 1 and ops[-1] == "result"


async def test_partial_run_lists_each_failed_item_with_the_providers_error(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, request("ok"), request("bad", model="fail-x"), request("ok2"))
    op_id = made["operation_id"]
    done = await finish(gateway, op_id)
    ended_as(done, "succeeded", "completed_with_errors")
    never_success(done)
    summary_is(done, processed=3, succeeded=2, failed=1, not_processed=0)
    assert done["errors_url"]
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert sorted(line["custom_id"] for line in result["result"]) == ["ok", "ok2"]
    [failed] = await errors_of(gateway, op_id)
    assert (failed["id"], failed["status"]) == ("bad", "errored")
    assert failed["error"]["error"]["type"] == "not_found_error"


async def test_every_request_failed_is_failed_with_the_items_listed(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, request("a", model="fail-1"), request("b", model="fail-2"))
    op_id = made["operation_id"]
    done = await finish(gateway, op_id)
    ended_as(done, "failed")
    never_success(done)
    assert done["error"]["code"] == "all_items_failed" and done["errors_url"]
    summary_is(done, processed=2, succeeded=0, failed=2, not_processed=0)
    assert (await gateway.http.get(f"/v1/operations/{op_id}/result")).status_code == 409
    failed = await errors_of(gateway, op_id)
    assert sorted(f["id"] for f in failed) == ["a", "b"]
    assert {f["error"]["error"]["type"] for f in failed} == {"not_found_error"}


async def test_expired_requests_keep_and_offer_the_part_that_was_done(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    # 30 * 1024 tokens is 30 hours of work: it expires at hour 24, unrun.
    made = await start(gateway, request("ok"), request("late", max_tokens=30 * 1024))
    op_id = made["operation_id"]
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "completed_with_errors"), done
    never_success(done)
    assert "1 item was never processed (the job EXPIRED" in done["message"]
    summary_is(done, processed=2, succeeded=1, failed=0, not_processed=1)
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert [line["custom_id"] for line in result["result"]] == ["ok"]
    [late] = await errors_of(gateway, op_id)
    assert (late["id"], late["status"], late["error"]) == ("late", "expired", {"type": "expired"})


async def test_cancel_ends_cancelled_after_one_cancel_call(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, request("never", max_tokens=10 * 1024))
    op_id = made["operation_id"]
    await gateway.tick(STEP)
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "not needed"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id)
    ended_as(done, "cancelled")
    never_success(done)
    _, calls = await the_batch(fake)
    assert calls["cancel_calls"] == 1
    assert (await gateway.http.get(f"/v1/operations/{op_id}/result")).status_code == 409


async def test_rate_limited_status_read_honours_retry_after_and_finishes(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, request("q1", max_tokens=3 * 1024))
    op_id = made["operation_id"]
    _, before = await the_batch(fake)
    # 1000 s: above the profile's 600 s backoff cap, inside its 3600 s bound.
    await fault(fake, op="retrieve", kind="rate_limit", retry_after=1000)
    reads = before.get("retrieve_calls", 0)
    for _ in range(10):  # poll until the throttled read happened
        await gateway.tick(STEP)
        _, calls = await the_batch(fake)
        if calls.get("retrieve_calls", 0) > reads:
            break
    rows = await history(gateway, op_id)
    assert len([e for e in rows if e["kind"] == "exchange" and e["data"]["status_code"] == 429])
    observed = [e for e in rows if e["kind"] == "observation"]
    assert observed[-1]["data"]["next_poll_in_seconds"] == 1000
    reads = calls["retrieve_calls"]
    await gateway.tick(999)  # the provider asked for 1000 s: nothing is sent before
    assert (await the_batch(fake))[1]["retrieve_calls"] == reads
    await gateway.tick(2)
    assert (await the_batch(fake))[1]["retrieve_calls"] == reads + 1
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done


async def test_cancelled_after_some_requests_keeps_their_output_and_lists_the_rest(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, request("done"), request("never", max_tokens=10 * 1024))
    op_id = made["operation_id"]
    await gateway.tick(STEP)  # one hour: "done" is done
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "enough"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("cancelled", "cancelled"), done
    never_success(done)
    assert "partial output is kept" in done["message"]
    summary_is(done, processed=2, succeeded=1, failed=0, not_processed=1)
    r = await gateway.http.get(f"/v1/operations/{op_id}/result")
    assert r.status_code == 200, r.text
    assert [line["custom_id"] for line in r.json()["result"]] == ["done"]
    [never] = await errors_of(gateway, op_id)
    assert (never["id"], never["status"]) == ("never", "canceled")
    _, calls = await the_batch(fake)
    assert calls["cancel_calls"] == 1 and calls["results_calls"] == 1


async def test_a_lost_create_answer_is_never_resent_and_goes_to_a_person(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    # The batch is made, then the answer is cut off halfway: no id reached jobgate.
    await fault(fake, op="create", kind="drop")
    made = await create(gateway, NAME, "batch", {"requests": [request("q1")]})
    await goes_to_a_person(gateway, made)
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == 1 and len(stats["jobs"]) == 1  # one create, one batch
    assert stats["list_calls"] == 0  # nothing to match a listing against
