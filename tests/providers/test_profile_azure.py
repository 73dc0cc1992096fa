"""The bundled `azure_operation_location` profile against the Azure AI Language jobs fake."""

from __future__ import annotations

import json
from typing import Any

from app.providers.answers.outcome import ResultClass, outcome
from app.providers.calls.types import Outcome
from app.providers.language.words import RemoteClass, SingleCreate
from tests.providers.conftest import Fake

NAME = "azure_operation_location"


def task(kind: str = "KeyPhraseExtraction", model: str = "latest") -> dict[str, Any]:
    return {"kind": kind, "taskName": kind.lower(), "parameters": {"modelVersion": model}}


def job(*tasks: dict[str, Any], text: str = "Jobs polled for you.") -> dict[str, Any]:
    return {
        "analysisInput": {"documents": [{"id": "1", "language": "en", "text": text}]},
        "tasks": list(tasks or (task(),)),
    }


async def test_submit_gives_the_job_only_in_operation_location(fake: Fake) -> None:
    assert fake.profile.single_create is SingleCreate.NONE
    found = await fake.create("analyze_text", job(), ref="op_01AZ")
    assert (found.outcome, found.exchange.status_code, found.body) == (Outcome.OK, 202, None)
    assert found.remote_job_id and found.status_url
    assert found.status_url.endswith(f"/jobs/{found.remote_job_id}?api-version=2023-04-01")
    assert "api-version=2023-04-01" in found.exchange.url
    assert found.exchange.request_headers["Ocp-Apim-Subscription-Key"] == "[redacted]"
    assert json.loads(found.exchange.request_body or "{}")["displayName"] == "op_01AZ"
    assert (await fake.stats())["jobs_by_reference"]["op_01AZ"] == [found.remote_job_id]


async def test_succeeded_job_is_collected_inline(fake: Fake) -> None:
    found = await fake.create("analyze_text", job(task(), task("SentimentAnalysis")))
    done = await fake.until_done(found.remote_job_id or "", status_url=found.status_url)
    assert done.exchange.url == found.status_url  # the monitor URL, its query untouched
    assert (done.remote_state, done.remote_class) == ("succeeded", RemoteClass.SUCCEEDED)
    got = await fake.client.result(fake.profile, found.remote_job_id or "", trace_id="t")
    assert got.outcome is Outcome.OK and len(got.result) == 2
    assert got.items == {"succeeded": 2, "failed": 0, "not_processed": 0, "processed": 2}
    assert outcome(done.remote_class, got.counts).result is ResultClass.SUCCEEDED


async def test_one_failed_task_is_partial_with_its_error(fake: Fake) -> None:
    found = await fake.create("analyze_text", job(task(), task("SentimentAnalysis", "bogus")))
    done = await fake.until_done(found.remote_job_id or "")
    assert (done.remote_state, done.remote_class) == (
        "partiallyCompleted",
        RemoteClass.SUCCEEDED_PARTIAL,
    )
    got = await fake.client.result(fake.profile, found.remote_job_id or "", trace_id="t")
    [failed] = got.failed_items
    assert failed["innererror"]["code"] == "ModelVersionIncorrect"
    assert failed["target"] == "#/tasks/items/1"
    verdict = outcome(done.remote_class, got.counts)
    assert (verdict.result, verdict.keep_partial) == (ResultClass.COMPLETED_WITH_ERRORS, True)


async def test_every_task_failed_is_failed(fake: Fake) -> None:
    found = await fake.create("analyze_text", job(task(model="bogus")))
    done = await fake.until_done(found.remote_job_id or "")
    assert (done.remote_state, done.remote_class) == ("failed", RemoteClass.FAILED)
    assert done.error is not None and done.error["innererror"]["code"] == "ModelVersionIncorrect"


async def test_cancel_then_cancelled(fake: Fake) -> None:
    found = await fake.create("analyze_text", job(task(), task("SentimentAnalysis")))
    job_id = found.remote_job_id or ""
    await fake.status(job_id)
    sent = await fake.client.cancel(fake.profile, job_id, trace_id="t")
    assert (sent.outcome, sent.exchange.status_code) == (Outcome.OK, 202)
    assert sent.exchange.url.endswith(f"/jobs/{job_id}:cancel?api-version=2023-04-01")
    done = await fake.until_done(job_id)
    assert (done.remote_state, done.remote_class) == ("cancelled", RemoteClass.CANCELLED)


async def test_rate_limited_status_carries_retry_after(fake: Fake) -> None:
    found = await fake.create("analyze_text", job())
    await fake.fault(op="status", kind="rate_limit", retry_after=3)
    limited = await fake.status(found.remote_job_id or "", status_url=found.status_url)
    assert (limited.outcome, limited.retry_after_seconds) == (Outcome.RATE_LIMITED, 3.0)


async def test_an_operation_location_elsewhere_is_refused(fake: Fake) -> None:
    elsewhere = "https://other.example/language/analyze-text/jobs/x?api-version=2023-04-01"
    found = await fake.status("x", status_url=elsewhere)
    assert found.outcome is Outcome.REJECTED and found.exchange.status_code is None
    assert "outside the profile's origins" in (found.exchange.error or "")


async def test_a_failed_submit_answer_leaves_one_job(fake: Fake) -> None:
    # The fake's `drop` cuts half of an empty 202 body: the headers (and the job id) arrive
    # whole. A 500 after the effect is the lost answer here.
    await fake.fault(op="submit", kind="error_after")
    lost = await fake.create("analyze_text", job(), ref="op_01LOST")
    assert lost.outcome is Outcome.AMBIGUOUS
    assert len((await fake.stats())["jobs_by_reference"]["op_01LOST"]) == 1
