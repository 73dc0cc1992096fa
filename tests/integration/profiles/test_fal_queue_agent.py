"""The bundled `fal_queue` profile driven end to end through the agent API.

The fal queue fake (jobgate_fakes/providers/fal_queue, built from fal_client and fal's
queue docs) queues a request to an image app and answers the status, result and cancel
URLs; one status read is one second (`queue_seconds` IN_QUEUE, `run_seconds`
IN_PROGRESS); each word `nsfw` in the prompt flags one image; `crash` makes the app
fail; a request without a prompt runs, reads COMPLETED, and its result read answers 422.
"""

from __future__ import annotations

from typing import Any

import httpx2

from tests.conftest import Gateway
from tests.integration.profiles.conftest import (
    KEY,
    errors_of,
    fault,
    finish,
    history,
    never_success,
    summary_is,
)
from tests.integration.profiles.lost_create import create, goes_to_a_person, sent_creates
from tests.integration.profiles.rate_limit import honours_retry_hint

NAME = "fal_queue"
KIND = "run"
APP = "fal-ai/flux"
STEP_S = 31.0  # past this profile's 30 s polling cap, well inside its 3600 s result deadline


def run(**arguments: Any) -> dict[str, Any]:
    return {"app": APP, "arguments": {"prompt": "a cat in a space suit", **arguments}}


async def start(gateway: Gateway, **arguments: Any) -> str:
    made = await create(gateway, NAME, KIND, run(**arguments))
    assert made["guarantees"]["single_create"] == "none", made
    return str(made["operation_id"])


async def one_job(fake: httpx2.AsyncClient, creates: int = 1) -> dict[str, int]:
    """The fake queued exactly one request (from `creates` submit calls); its call counts."""
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == creates and len(stats["jobs"]) == 1, stats
    [calls] = stats["jobs"].values()
    return dict(calls)


def exchanges(rows: list[dict[str, Any]], operation: str) -> list[dict[str, Any]]:
    return [
        e["data"] for e in rows if e["kind"] == "exchange" and e["data"]["operation"] == operation
    ]


async def test_a_run_is_followed_at_its_urls_and_its_images_collected(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, num_images=2, queue_seconds=2, run_seconds=3)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    summary_is(done, processed=2, succeeded=2, failed=0, not_processed=0)
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()["result"]
    assert len(result["images"]) == 2 and result["seed"] == 42
    rows = await history(gateway, op_id)
    [submit] = exchanges(rows, "create")
    assert submit["request_headers"]["Authorization"] == "[redacted]"
    reads = exchanges(rows, "status")
    # Read where the submit said, with the profile's status query on that URL.
    assert reads and all(r["url"].endswith("/status?logs=1") for r in reads)
    assert all(f"/{APP}/requests/{done['remote_job_id']}/" in r["url"] for r in reads)
    assert KEY not in str(rows)
    calls = await one_job(fake)
    assert calls["result_calls"] == 1 and calls["status_calls"] >= 6


async def test_flagged_images_are_failed_items_and_only_the_rest_is_offered(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, prompt="an nsfw cat", num_images=3)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "completed_with_errors"), done
    never_success(done)
    summary_is(done, processed=3, succeeded=2, failed=1, not_processed=0)
    [item] = await errors_of(gateway, op_id)
    assert (item["id"], item["status"]) == ("images/2", "NSFW")
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()["result"]
    assert len(result["images"]) == 2 and "black" not in str(result["images"])
    await one_job(fake)


async def test_every_image_flagged_is_failed(gateway: Gateway, fake: httpx2.AsyncClient) -> None:
    op_id = await start(gateway, prompt="nsfw nsfw", num_images=2)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    never_success(done)
    assert [f["id"] for f in await errors_of(gateway, op_id)] == ["images/0", "images/1"]
    await one_job(fake)


async def test_completed_with_an_error_is_failed_with_fals_words(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, run_seconds=5, crash=True)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    never_success(done)
    assert "Internal error in the app" in done["error"]["message"]
    assert ".." not in done["message"]
    assert "result_calls" not in await one_job(fake)  # the status said it all


async def test_a_422_result_after_completed_is_never_a_success(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    """fal answers COMPLETED, then the result read answers 422 (the app refused its
    arguments when it ran). Declared as the job's own failure (result.job_failed_statuses)."""
    made = await create(gateway, NAME, KIND, {"app": APP, "arguments": {"num_images": 1}})
    op_id = str(made["operation_id"])
    done = await finish(gateway, op_id, step=STEP_S, max_ticks=200)
    never_success(done)
    assert done["state"] == "failed", done  # at the first such read, with fal's detail
    rows = await history(gateway, op_id)
    reads = [r for r in exchanges(rows, "result") if r["status_code"] == 422]
    assert len(reads) == 1, reads
    assert "field required" in done["error"]["message"]
    await one_job(fake)


async def test_a_slow_request_is_followed_to_its_end(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="submit", kind="delay", delay_ms=300)
    op_id = await start(gateway, queue_seconds=10, run_seconds=20)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    await one_job(fake)


async def test_a_lost_submit_answer_is_never_resent_and_goes_to_a_person(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="submit", kind="drop")
    made = await create(gateway, NAME, KIND, run())
    await goes_to_a_person(gateway, made)
    await one_job(fake)


async def test_a_throttled_submit_without_a_hint_goes_again_and_queues_one_request(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="submit", kind="rate_limit", retry_after=0)
    made = await create(gateway, NAME, KIND, run())
    op_id = str(made["operation_id"])
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    assert await sent_creates(gateway, op_id) == 2
    rows = await history(gateway, op_id)
    [limited] = [e for e in exchanges(rows, "create") if e["status_code"] == 429]
    assert limited["response_body"] == "Too Many Requests"
    await one_job(fake, creates=2)


async def test_a_throttled_submit_waits_for_retry_after_then_goes_again(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="submit", kind="rate_limit", retry_after=40)
    made = await create(gateway, NAME, KIND, run())
    op_id = str(made["operation_id"])
    assert made["done"] is False and made["remote_job_id"] is None, made
    await gateway.tick(39)
    assert (await fake.get("/_fake/stats")).json()["create_calls"] == 1
    await gateway.tick(2)
    assert (await fake.get("/_fake/stats")).json()["create_calls"] == 2
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    await one_job(fake, creates=2)


async def test_a_throttled_status_read_honours_retry_after(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, run_seconds=20)
    limited = await honours_retry_hint(gateway, fake, op_id, op="status", hint=100, step=STEP_S)
    assert {k.lower(): v for k, v in limited["response_headers"].items()}["retry-after"] == "100"
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done


async def test_cancel_is_requested_once_and_ends_cancelled(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, run_seconds=60)
    await gateway.tick(STEP_S)
    await gateway.tick(STEP_S)
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("cancelled", "cancelled"), done
    never_success(done)
    [sent] = exchanges(await history(gateway, op_id), "cancel")
    assert (sent["method"], sent["status_code"]) == ("PUT", 202)
    assert "CANCELLATION_REQUESTED" in sent["response_body"]
    assert (await one_job(fake))["cancel_calls"] == 1


async def test_a_cancel_too_late_is_already_completed_and_the_result_is_kept(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, run_seconds=3)
    await gateway.tick(STEP_S)
    await fake.post("/_fake/advance", json={"steps": 10})  # done at fal, not yet read so
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id, step=STEP_S)
    [sent] = exchanges(await history(gateway, op_id), "cancel")
    assert sent["status_code"] == 400 and "ALREADY_COMPLETED" in sent["response_body"]
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()["result"]
    assert len(result["images"]) == 1
    assert (await one_job(fake))["cancel_calls"] == 1


async def test_an_ignored_cancel_is_reported_as_what_happened(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, prompt="nsfw cat", num_images=2, run_seconds=5, ignore_cancel=True)
    await gateway.tick(STEP_S)
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id, step=STEP_S)
    assert done["state"] != "cancelled", done  # fal accepted the cancel; the app ran on
    never_success(done)  # one of its two images was flagged
    summary_is(done, processed=2, succeeded=1, failed=1, not_processed=0)
    assert (await one_job(fake))["cancel_calls"] == 1
