"""The bundled `openai_batch` profile driven end to end through the agent API.

The OpenAI Batch fake (jobgate_fakes/providers/openai_batch, built from OpenAI's Batch and
Files reference) runs on a real uvicorn server; the gateway reaches it through the
profile's base-URL variable. Behaviour comes only from the fake's documented knobs
(batchwork.py): a request whose model starts with `fail` fails with the model
endpoint's 404, `max_tokens` sets how many hours (status reads) it takes, and a
request needing more than the 24-hour window expires. Faults are queued through
`POST /_fake/faults`; calls are counted at the fake (`GET /_fake/stats`), never in
jobgate's own tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest

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
from tests.integration.profiles.lost_create import create, sent_creates

NAME = "openai_batch"
PROFILE = (
    Path(__file__).resolve().parents[3] / "app" / "providers" / "profiles" / "openai_batch.yaml"
)


@pytest.fixture
def gateway_settings(fake: httpx2.AsyncClient, tmp_path: Path) -> dict[str, Any]:
    """Beside the bundled profile, `openai_batch_small`: the same, reading at most 600 bytes
    of an output file (the fake's env is set before the gateway starts)."""
    text = PROFILE.read_text().replace("name: openai_batch\n", "name: openai_batch_small\n")
    marker = "    - name: output\n"
    assert text.count(marker) == 1
    text = text.replace(marker, marker + "      max_bytes: 600\n")
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "openai_batch_small.yaml").write_text(text)
    return {"profiles_dir": tmp_path / "profiles"}


def line(custom_id: str, model: str = "gpt-4o-mini", max_tokens: int = 100) -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": model, "max_tokens": max_tokens, "messages": []},
    }


async def start(gateway: Gateway, *lines: dict[str, Any]) -> dict[str, Any]:
    made = await start_op(
        gateway, NAME, {"endpoint": "/v1/chat/completions", "requests": list(lines)}
    )
    assert made["guarantees"]["single_create"] == "lookup"
    return made


async def job_of(fake: httpx2.AsyncClient, op_id: str) -> tuple[str, dict[str, int]]:
    """The one batch the fake made for this operation, and its call counters."""
    ref = f"jobgate_ref={op_id}"
    stats = (await fake.get("/_fake/stats", params={"reference": ref})).json()
    assert stats["creates_by_reference"][ref] == 1
    [job] = stats["jobs_by_reference"][ref]
    return job, stats["jobs"][job]


async def test_success_collects_and_validates_the_jsonl_output(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, line("a"), line("b"), line("c"))
    op_id = made["operation_id"]
    done = await finish(gateway, op_id)
    ended_as(done, "succeeded")
    assert done["remote_state"] == "completed" and done["error"] is None
    summary_is(done, processed=3, succeeded=3, failed=0, not_processed=0)
    r = await gateway.http.get(f"/v1/operations/{op_id}/result")
    assert r.status_code == 200, r.text
    result = r.json()
    assert sorted(line["custom_id"] for line in result["result"]) == ["a", "b", "c"]
    assert all(line["response"]["status_code"] == 200 for line in result["result"])
    assert result["sha256"] and result["size"] > 0
    assert (await errors_of(gateway, op_id)) == []
    job, calls = await job_of(fake, op_id)
    assert done["remote_job_id"] == job and calls.get("content_calls") == 1
    rows = await history(gateway, op_id)
    assert KEY not in str(rows)
    ops = [e["data"]["operation"] for e in rows if e["kind"] == "exchange"]
    assert ops.count("create") == 1 and "prepare" in ops  # the upload is on record too


async def test_partial_run_lists_each_failed_item_with_the_providers_error(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, line("a"), line("b", model="fail-nope"), line("c"))
    op_id = made["operation_id"]
    done = await finish(gateway, op_id)
    ended_as(done, "succeeded", "completed_with_errors")
    never_success(done)
    summary_is(done, processed=3, succeeded=2, failed=1, not_processed=0)
    assert done["errors_url"]
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert sorted(line["custom_id"] for line in result["result"]) == ["a", "c"]
    [failed] = await errors_of(gateway, op_id)
    assert (failed["id"], failed["status"], failed["document"]) == ("b", 404, "errors")
    assert failed["error"]["code"] == "model_not_found"
    assert "fail-nope" in failed["error"]["message"]


async def test_every_request_failed_is_failed_with_the_items_listed(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, line("a", model="fail-1"), line("b", model="fail-2"))
    op_id = made["operation_id"]
    done = await finish(gateway, op_id)
    ended_as(done, "failed")
    never_success(done)
    assert done["error"]["code"] == "all_items_failed"
    assert done["errors_url"]
    summary_is(done, processed=2, succeeded=0, failed=2, not_processed=0)
    assert (await gateway.http.get(f"/v1/operations/{op_id}/result")).status_code == 409
    failed = await errors_of(gateway, op_id)
    assert sorted(f["id"] for f in failed) == ["a", "b"]
    assert {f["error"]["code"] for f in failed} == {"model_not_found"}


async def test_expired_batch_keeps_and_offers_the_part_that_was_done(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    # 30 * 1024 tokens is 30 hours of work: the batch expires at hour 24 with it unrun.
    made = await start(gateway, line("a"), line("slow", max_tokens=30 * 1024))
    op_id = made["operation_id"]
    done = await finish(gateway, op_id)
    assert done["remote_state"] == "expired"
    assert (done["state"], done["outcome"]) == ("succeeded", "completed_with_errors"), done
    never_success(done)
    assert "1 item was never processed (the job EXPIRED" in done["message"]
    assert done["errors_url"]
    summary_is(done, processed=2, succeeded=1, failed=0, not_processed=1)
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert [line["custom_id"] for line in result["result"]] == ["a"]
    [expired] = await errors_of(gateway, op_id)
    assert (expired["id"], expired["error"]["code"]) == ("slow", "batch_expired")
    # A result with items never processed (none failed) waits in the attention inbox.
    inbox = (await gateway.http.get("/v1/attention")).json()["items"]
    [why] = [i["why"] for i in inbox if i["operation"]["operation_id"] == op_id]
    assert why == "completed with errors: 0 items failed, 1 never processed (1 listed at /errors)"


async def test_cancel_ends_cancelled_after_one_cancel_call(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, line("slow", max_tokens=10 * 1024))
    op_id = made["operation_id"]
    await gateway.tick(STEP)  # in progress
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "not needed"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id)
    ended_as(done, "cancelled")
    assert done["remote_state"] == "cancelled"
    never_success(done)
    _, calls = await job_of(fake, op_id)
    assert calls["cancel_calls"] == 1
    assert (await gateway.http.get(f"/v1/operations/{op_id}/result")).status_code == 409


async def test_rate_limited_status_read_honours_retry_after_and_finishes(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, line("a"))
    op_id = made["operation_id"]
    job, before = await job_of(fake, op_id)
    # 1000 s: above the profile's 600 s backoff cap, inside its 3600 s bound.
    await fault(fake, op="retrieve", kind="rate_limit", retry_after=1000)
    reads = before.get("retrieve_calls", 0)
    for _ in range(10):  # poll until the throttled read happened
        await gateway.tick(STEP)
        _, calls = await job_of(fake, op_id)
        if calls.get("retrieve_calls", 0) > reads:
            break
    rows = await history(gateway, op_id)
    limited = [e for e in rows if e["kind"] == "exchange" and e["data"]["status_code"] == 429]
    assert len(limited) == 1
    observed = [e for e in rows if e["kind"] == "observation"]
    assert observed[-1]["data"]["next_poll_in_seconds"] == 1000
    reads = calls["retrieve_calls"]
    await gateway.tick(999)  # the provider asked for 1000 s: nothing is sent before
    assert (await job_of(fake, op_id))[1]["retrieve_calls"] == reads
    await gateway.tick(2)
    assert (await job_of(fake, op_id))[1]["retrieve_calls"] == reads + 1
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    assert done["remote_job_id"] == job


async def test_cancelled_after_some_requests_keeps_and_offers_their_output(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway, line("a"), line("slow", max_tokens=10 * 1024))
    op_id = made["operation_id"]
    for _ in range(10):  # until "a" (one hour of work) is done
        await gateway.tick(STEP)
        body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
        if (body["progress"] or {}).get("completed"):
            break
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "enough"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("cancelled", "cancelled"), done
    never_success(done)
    assert "partial output is kept" in done["message"]
    assert done["next_action"]["call"] == f"GET /v1/operations/{op_id}/result"
    # "slow" never ran: counted as not_processed, never as succeeded (nor as failed).
    summary_is(done, processed=2, succeeded=1, failed=0, not_processed=1)
    r = await gateway.http.get(f"/v1/operations/{op_id}/result")
    assert r.status_code == 200, r.text
    kept = r.json()
    assert kept["status"] == "cancelled" and kept["sha256"]
    assert [line["custom_id"] for line in kept["result"]] == ["a"]
    _, calls = await job_of(fake, op_id)
    assert calls["cancel_calls"] == 1 and calls["content_calls"] == 1


async def test_an_output_file_over_its_bound_is_a_validation_failure_not_a_retry(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    lines = [line(f"r{i}") for i in range(20)]
    made = await start_op(
        gateway, "openai_batch_small", {"endpoint": "/v1/chat/completions", "requests": lines}
    )
    op_id = made["operation_id"]
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("result_validation_failed", "needs_attention")
    never_success(done)
    assert done["error"]["details"] == {"check": "result_too_large", "document": "output"}
    assert (await gateway.http.get(f"/v1/operations/{op_id}/result")).status_code == 409
    _, calls = await job_of(fake, op_id)
    assert calls["content_calls"] == 1  # read once, up to the bound; never again


async def test_a_lost_create_answer_is_found_again_by_its_reference_and_not_resent(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    # The batch is made, then the answer is cut off halfway: no id reached jobgate. The
    # listing shows metadata.jobgate_ref, so reconciliation finds the batch.
    await fault(fake, op="create", kind="drop")
    requests = [line("a"), line("b")]
    made = await create(
        gateway, NAME, "batch", {"endpoint": "/v1/chat/completions", "requests": requests}
    )
    op_id = made["operation_id"]
    assert made["guarantees"]["single_create"] == "lookup"
    assert made["remote_job_id"] is None and made["done"] is False, made
    never_success(made)
    done = await finish(gateway, op_id)
    ended_as(done, "succeeded")
    summary_is(done, processed=2, succeeded=2, failed=0, not_processed=0)
    job, _ = await job_of(fake, op_id)  # one create call carried the reference; one batch
    assert done["remote_job_id"] == job
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == 1 and stats["list_calls"] >= 1
    assert await sent_creates(gateway, op_id) == 1
    rows = await history(gateway, op_id)
    ops = [e["data"]["operation"] for e in rows if e["kind"] == "exchange"]
    assert "lookup" in ops and ops.index("lookup") > ops.index("create")
    states = [e["to_state"] for e in rows if e["kind"] == "transition"]
    assert "create_unknown" in states and "reconciling" in states
