"""The bundled `google_translate` profile (AIP-151) against the Cloud Translation batch fake."""

from __future__ import annotations

import json
from typing import Any

from app.providers.answers.outcome import ResultClass, outcome
from app.providers.calls.client import ProviderClient
from app.providers.calls.types import Outcome
from app.providers.language.counts import Counts
from app.providers.language.words import RemoteClass, SingleCreate
from tests.providers.conftest import Fake

NAME = "google_translate"
EXTRA_ENV = {"GOOGLE_CLOUD_PROJECT": "my-project"}


def translate(*files: str, prefix: str = "gs://out/a/", targets: int = 1) -> dict[str, Any]:
    return {
        "sourceLanguageCode": "en",
        "targetLanguageCodes": ["de", "fr", "it"][:targets],
        "inputConfigs": [{"gcsSource": {"inputUri": f"gs://in/{f}"}} for f in files],
        "outputConfig": {"gcsDestination": {"outputUriPrefix": prefix}},
    }


async def test_create_names_the_project_and_labels_the_reference(fake: Fake) -> None:
    assert fake.profile.single_create is SingleCreate.NONE
    found = await fake.create("batch_translate_text", translate("a.txt"), ref="op_01ABCDEF")
    assert found.exchange.url == (
        f"{fake.url}/v3/projects/my-project/locations/us-central1:batchTranslateText"
    )
    assert json.loads(found.exchange.request_body or "{}")["labels"] == {
        "jobgate_ref": "op_01abcdef"
    }
    assert found.outcome is Outcome.OK and "/operations/" in (found.remote_job_id or "")
    assert (found.remote_state, found.remote_class) == ("RUNNING", RemoteClass.RUNNING)
    stats = await fake.stats()
    assert stats["jobs_by_reference"]["jobgate_ref=op_01abcdef"] == [found.remote_job_id]


async def test_done_with_response_is_succeeded_and_collected(fake: Fake) -> None:
    found = await fake.create("batch_translate_text", translate("a.txt", "b.txt", targets=2))
    done = await fake.until_done(found.remote_job_id or "")
    assert done.body is not None and done.body["done"] is True
    assert (done.remote_state, done.remote_class) == ("SUCCEEDED", RemoteClass.SUCCEEDED)
    assert done.counts == Counts(total=4000, succeeded=4000, failed=0, not_processed=0)
    assert done.result["translatedCharacters"] == "4000"  # the response is the result
    got = await fake.client.result(fake.profile, found.remote_job_id or "", trace_id="t")
    assert got.outcome is Outcome.OK and got.result == done.result
    assert outcome(done.remote_class, got.counts).result is ResultClass.SUCCEEDED


async def test_some_failed_characters_are_partial(fake: Fake) -> None:
    found = await fake.create("batch_translate_text", translate("a.txt", "fail.txt"))
    done = await fake.until_done(found.remote_job_id or "")
    assert done.remote_class is RemoteClass.SUCCEEDED_PARTIAL
    verdict = outcome(done.remote_class, done.counts)
    assert verdict.result is ResultClass.COMPLETED_WITH_ERRORS


async def test_done_with_error_is_failed(fake: Fake) -> None:
    found = await fake.create("batch_translate_text", translate("fail-1.txt"))
    done = await fake.until_done(found.remote_job_id or "")
    assert (done.remote_state, done.remote_class) == ("FAILED", RemoteClass.FAILED)
    assert done.error is not None and done.error["code"] == 3


async def test_cancel_is_done_with_code_1(fake: Fake) -> None:
    found = await fake.create("batch_translate_text", translate("a.txt", "b.txt", targets=3))
    job = found.remote_job_id or ""
    await fake.status(job)
    sent = await fake.client.cancel(fake.profile, job, trace_id="t")
    assert (sent.outcome, sent.exchange.request_body) == (Outcome.OK, "{}")
    cancelling = await fake.status(job)
    assert (cancelling.remote_state, cancelling.remote_class) == (
        "CANCELLED",
        RemoteClass.CANCELLED,
    )
    assert cancelling.error is not None and cancelling.error["code"] == 1
    counts = cancelling.counts
    assert counts is not None and counts.succeeded == 1000 and counts.not_processed == 5000
    verdict = outcome(cancelling.remote_class, counts)
    assert (verdict.result, verdict.keep_partial) == (ResultClass.CANCELLED, True)


async def test_rate_limit_without_retry_after_uses_retry_info(fake: Fake) -> None:
    found = await fake.create("batch_translate_text", translate("a.txt"))
    await fake.fault(op="get", kind="rate_limit", retry_after=7)
    limited = await fake.status(found.remote_job_id or "")
    assert limited.outcome is Outcome.RATE_LIMITED
    assert "retry-after" not in {k.lower() for k in limited.exchange.response_headers}
    assert limited.retry_after_seconds == 7.0


async def test_a_second_create_for_the_same_prefix_is_refused_by_google(fake: Fake) -> None:
    await fake.fault(op="create", kind="drop")
    lost = await fake.create("batch_translate_text", translate("a.txt", prefix="gs://o/x/"))
    assert lost.outcome is Outcome.AMBIGUOUS
    # jobgate never resends (single_create none); if anyone did, Google would refuse it
    # with a 400 that must not be read as "no job was made".
    again = await fake.create("batch_translate_text", translate("a.txt", prefix="gs://o/x/"))
    assert (again.outcome, again.exchange.status_code) == (Outcome.REJECTED, 400)
    assert len((await fake.stats())["jobs_by_reference"]["jobgate_ref=op_01test"]) == 1


async def test_without_a_project_nothing_is_sent(fake: Fake) -> None:
    env = {k: v for k, v in fake.env.items() if k != "GOOGLE_CLOUD_PROJECT"}
    client = ProviderClient(fake.client._http, env)
    found = await client.create(
        fake.profile, "batch_translate_text", translate("a.txt"), token="t",
        client_reference="op_1", trace_id="t",
    )  # fmt: skip
    assert found.outcome is Outcome.REJECTED and found.exchange.status_code is None
    assert "project" in (found.exchange.error or "")
    assert (await fake.stats())["create_calls"] == 0
