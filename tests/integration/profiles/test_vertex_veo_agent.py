"""The bundled `vertex_veo` profile driven end to end through the agent API.

The Vertex AI Veo fake (jobgate_fakes/providers/vertex_veo, built from python-genai and
Vertex's REST reference) answers `predictLongRunning` with an operation name; the only
read is `fetchPredictOperation`, a POST whose body names the operation. One read is one
second of rendering (`durationSeconds`, 4 to 8); each word `unsafe` in the prompt has
the safety filter blank one sample; `crash` ends the operation with an error.
"""

from __future__ import annotations

import json
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
from tests.integration.profiles.lost_create import create, goes_to_a_person
from tests.integration.profiles.rate_limit import honours_retry_hint

NAME = "vertex_veo"
KIND = "generate_videos"
EXTRA_ENV = {"GOOGLE_CLOUD_PROJECT": "my-project", "GOOGLE_CLOUD_LOCATION": "us-central1"}
MODEL = "veo-3.0-generate-001"
STEP_S = 61.0  # past this profile's 60 s polling cap, well inside its 3600 s result deadline


def videos(prompt: str = "a cat surfing", samples: int = 1, seconds: int = 4) -> dict[str, Any]:
    params = {"sampleCount": samples, "durationSeconds": seconds, "storageUri": "gs://out/veo/"}
    return {"model": MODEL, "instances": [{"prompt": prompt}], "parameters": params}


async def start(gateway: Gateway, **kw: Any) -> str:
    made = await create(gateway, NAME, KIND, videos(**kw))
    assert made["done"] is False and made["guarantees"]["single_create"] == "none", made
    return str(made["operation_id"])


async def one_job(fake: httpx2.AsyncClient) -> dict[str, int]:
    """The fake made exactly one operation, from one create call; its call counts."""
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == 1 and len(stats["jobs"]) == 1, stats
    [calls] = stats["jobs"].values()
    return dict(calls)


def exchanges(rows: list[dict[str, Any]], operation: str) -> list[dict[str, Any]]:
    return [
        e["data"] for e in rows if e["kind"] == "exchange" and e["data"]["operation"] == operation
    ]


async def test_status_is_read_by_post_with_the_operation_name_and_videos_are_collected(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, samples=2)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    summary_is(done, processed=2, succeeded=2, failed=0, not_processed=0)
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()["result"]
    assert [v["mimeType"] for v in result] == ["video/mp4", "video/mp4"]
    assert all(v["gcsUri"].startswith("gs://out/veo/") for v in result)
    rows = await history(gateway, op_id)
    reads = exchanges(rows, "status")
    assert reads and all(r["method"] == "POST" for r in reads)
    assert all(r["url"].endswith(f"/models/{MODEL}:fetchPredictOperation") for r in reads)
    assert {json.loads(r["request_body"])["operationName"] for r in reads} == {
        done["remote_job_id"]
    }
    # A running operation is `{name}` alone (no `done`): read as running, never as an end.
    running = [r for r in reads if '"done"' not in (r["response_body"] or "")]
    assert running and all(r["status_code"] == 200 for r in running)
    assert (await one_job(fake))["fetch_calls"] >= 5  # 4 s of rendering, then done
    assert KEY not in str(rows)


async def test_some_samples_filtered_are_failed_items_with_the_filters_reason(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, prompt="an unsafe cat", samples=3)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "completed_with_errors"), done
    never_success(done)
    summary_is(done, processed=3, succeeded=2, failed=1, not_processed=0)
    [item] = await errors_of(gateway, op_id)
    assert (item["id"], item["status"]) == ("filtered_1", "FILTERED")
    assert "Support codes" in item["error"]["message"]
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()["result"]
    assert len(result) == 2
    await one_job(fake)


async def test_every_sample_filtered_is_failed_with_the_reason(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, prompt="unsafe unsafe", samples=2)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    never_success(done)
    assert "usage guidelines" in done["error"]["message"]
    assert "without giving a reason" not in done["message"] and ".." not in done["message"]
    assert [f["id"] for f in await errors_of(gateway, op_id)] == ["filtered_1", "filtered_2"]
    await one_job(fake)


async def test_a_failure_after_running_is_failed_with_googles_error(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, prompt="crash now", seconds=6)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    never_success(done)
    assert "Internal error encountered" in done["error"]["message"]
    assert (await one_job(fake))["fetch_calls"] >= 6


async def test_a_slow_create_answer_is_waited_for_and_sent_once(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="create", kind="delay", delay_ms=300)
    op_id = await start(gateway, seconds=8)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    await one_job(fake)


async def test_a_lost_create_answer_is_never_resent_and_goes_to_a_person(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="create", kind="drop")
    made = await create(gateway, NAME, KIND, videos())
    await goes_to_a_person(gateway, made)
    await one_job(fake)


async def test_a_rate_limited_create_starts_nothing_and_says_so(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="create", kind="rate_limit", retry_after=30)
    made = await create(gateway, NAME, KIND, videos())
    done = await finish(gateway, str(made["operation_id"]), step=STEP_S)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    never_success(done)
    assert "nothing was started" in done["error"]["message"]
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == 1 and stats["jobs"] == {}


async def test_a_rate_limited_read_waits_for_retry_info(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, seconds=8)
    limited = await honours_retry_hint(gateway, fake, op_id, op="fetch", hint=500, step=STEP_S)
    assert "google.rpc.RetryInfo" in limited["response_body"]
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    await one_job(fake)


async def test_a_rate_limited_read_without_a_hint_backs_off_and_finishes(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, seconds=4)
    await fault(fake, op="fetch", kind="rate_limit", retry_after=0, times=2)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    limited = [
        e for e in exchanges(await history(gateway, op_id), "status") if e["status_code"] == 429
    ]
    assert len(limited) == 2 and all("RetryInfo" not in (e["response_body"] or "") for e in limited)
    await one_job(fake)


async def test_a_4xx_read_after_the_videos_are_made_is_never_a_decision(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, seconds=4)
    await gateway.tick(STEP_S)  # accepted: the first read is due
    await fake.post("/_fake/advance", json={"steps": 10})  # rendered, not yet read as done
    await fault(fake, op="fetch", kind="error_before", status=400)
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    reads = exchanges(await history(gateway, op_id), "status")
    assert [r["status_code"] for r in reads].count(400) == 1
    await one_job(fake)


async def test_a_cancel_is_not_sent_where_there_is_none_and_the_end_is_reported(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    """Vertex offers no cancel of these operations: the cancel asked of jobgate is ignored
    by the provider, and what the operation really did is what the agent is told."""
    op_id = await start(gateway, prompt="unsafe cat", samples=2, seconds=8)
    await gateway.tick(STEP_S)
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id, step=STEP_S)
    never_success(done)  # one of the two samples was filtered: never a plain success
    assert done["state"] != "cancelled", done  # the provider never cancelled anything
    calls = await one_job(fake)
    assert set(calls) == {"fetch_calls"}  # no cancel call went out
