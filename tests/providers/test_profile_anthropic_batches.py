"""The bundled `anthropic_message_batches` profile against the Message Batches fake."""

from __future__ import annotations

import json
from typing import Any

from app.providers.answers.outcome import ResultClass, outcome
from app.providers.calls.types import CallResult, Outcome
from app.providers.language.counts import Counts
from app.providers.language.words import RemoteClass, SingleCreate
from tests.providers.conftest import Fake

NAME = "anthropic_message_batches"


def request(custom_id: str, model: str = "claude-x", max_tokens: int = 100) -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "params": {"model": model, "max_tokens": max_tokens, "messages": []},
    }


def batch(*requests: dict[str, Any]) -> dict[str, Any]:
    return {"requests": list(requests)}


async def test_create_sends_the_version_header_and_the_requests_untouched(fake: Fake) -> None:
    assert fake.profile.single_create is SingleCreate.NONE
    found = await fake.create("batch", batch(request("q1"), request("q2")))
    assert found.outcome is Outcome.OK and found.remote_job_id
    assert (found.remote_state, found.remote_class) == ("in_progress", RemoteClass.RUNNING)
    headers = found.exchange.request_headers
    assert headers["anthropic-version"] == "2023-06-01" and headers["x-api-key"] == "[redacted]"
    sent = json.loads(found.exchange.request_body or "{}")
    assert [r["custom_id"] for r in sent["requests"]] == ["q1", "q2"]
    assert (await fake.stats())["jobs_by_reference"]["q1"] == [found.remote_job_id]


async def test_ended_all_succeeded_collects_the_results_at_results_url(fake: Fake) -> None:
    created = await fake.create("batch", batch(request("q1"), request("q2")))
    done = await fake.until_done(created.remote_job_id or "")
    assert (done.remote_state, done.remote_class) == ("ended", RemoteClass.SUCCEEDED)
    assert done.counts == Counts(total=2, succeeded=2, failed=0, not_processed=0)
    got = await fake.client.result(fake.profile, created.remote_job_id or "", trace_id="t")
    assert got.outcome is Outcome.OK
    assert sorted(r["custom_id"] for r in got.result) == ["q1", "q2"]
    assert got.documents[0].url == done.fields["results_url"]
    assert outcome(done.remote_class, got.counts).result is ResultClass.SUCCEEDED


async def test_ended_with_errors_and_expiry_is_partial_with_failed_items(fake: Fake) -> None:
    created = await fake.create(
        "batch",
        batch(request("ok"), request("bad", model="fail-x"), request("late", max_tokens=30_000)),
    )
    done = await fake.until_done(created.remote_job_id or "")
    assert done.remote_class is RemoteClass.SUCCEEDED_PARTIAL
    assert done.counts == Counts(total=3, succeeded=1, failed=1, not_processed=1)
    got = await fake.client.result(
        fake.profile, created.remote_job_id or "", trace_id="t", status=done
    )
    assert [r["custom_id"] for r in got.result] == ["ok"]
    failed = {f["id"]: f for f in got.failed_items}
    assert failed["bad"]["status"] == "errored"
    assert failed["bad"]["error"]["error"]["type"] == "not_found_error"
    assert (failed["late"]["status"], failed["late"]["error"]) == ("expired", {"type": "expired"})
    verdict = outcome(done.remote_class, got.counts)
    assert (verdict.result, verdict.keep_partial) == (ResultClass.COMPLETED_WITH_ERRORS, True)


async def test_ended_with_nothing_succeeded_is_failed(fake: Fake) -> None:
    created = await fake.create("batch", batch(request("a", model="fail-1")))
    done = await fake.until_done(created.remote_job_id or "")
    assert (done.remote_state, done.remote_class) == ("ended", RemoteClass.FAILED)


async def test_cancel_ends_cancelled_and_the_results_say_which(fake: Fake) -> None:
    created = await fake.create(
        "batch", batch(request("done"), request("never", max_tokens=10 * 1024))
    )
    job = created.remote_job_id or ""
    await fake.advance(job, 1)
    sent = await fake.client.cancel(fake.profile, job, trace_id="t")
    assert (sent.outcome, sent.remote_state, sent.remote_class) == (
        Outcome.OK,
        "canceling",
        RemoteClass.RUNNING,
    )
    done = await fake.until_done(job)
    assert (done.remote_state, done.remote_class) == ("ended", RemoteClass.CANCELLED)
    got = await fake.client.result(fake.profile, job, trace_id="t", status=done)
    assert [r["custom_id"] for r in got.result] == ["done"]
    assert [(f["id"], f["status"]) for f in got.failed_items] == [("never", "canceled")]
    verdict = outcome(done.remote_class, got.counts)
    assert (verdict.result, verdict.keep_partial) == (ResultClass.CANCELLED, True)
    late = await fake.client.cancel(fake.profile, job, trace_id="t")
    assert late.outcome is Outcome.REJECTED  # 400: the batch has ended


async def test_rate_limited_read_carries_retry_after(fake: Fake) -> None:
    created = await fake.create("batch", batch(request("q1")))
    await fake.fault(op="retrieve", kind="rate_limit", retry_after=11)
    found = await fake.status(created.remote_job_id or "")
    assert (found.outcome, found.retry_after_seconds) == (Outcome.RATE_LIMITED, 11.0)


async def test_results_url_elsewhere_is_refused_and_gets_no_key(fake: Fake) -> None:
    created = await fake.create("batch", batch(request("q1")))
    done = await fake.until_done(created.remote_job_id or "")
    stolen = CallResult(
        Outcome.OK,
        done.exchange,
        fields={"results_url": "https://attacker.example/collect"},
    )
    got = await fake.client.result(
        fake.profile, created.remote_job_id or "", trace_id="t", status=stolen
    )
    assert got.outcome is Outcome.REJECTED and got.exchange.status_code is None
    assert "outside the profile's origins" in (got.exchange.error or "")


async def test_lost_create_answer_cannot_be_looked_up(fake: Fake) -> None:
    await fake.fault(op="create", kind="drop")
    lost = await fake.create("batch", batch(request("q9")))
    assert lost.outcome is Outcome.AMBIGUOUS
    assert (await fake.stats())["jobs_by_reference"]["q9"]  # the batch exists
    none = await fake.client.lookup(fake.profile, token=None, client_reference="x", trace_id="t")
    assert none.stopped == "refused"  # single_create none: a person searches
