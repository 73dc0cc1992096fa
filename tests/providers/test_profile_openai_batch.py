"""The bundled `openai_batch` profile against the OpenAI Batch fake, through ProviderClient."""

from __future__ import annotations

import json
from typing import Any

from app.providers.answers.outcome import ResultClass, outcome
from app.providers.calls.types import Outcome
from app.providers.language.counts import Counts
from app.providers.language.words import RemoteClass, SingleCreate
from tests.providers.conftest import Fake

NAME = "openai_batch"


def line(custom_id: str, model: str = "gpt-4o-mini", max_tokens: int = 100) -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": model, "max_tokens": max_tokens, "messages": []},
    }


def batch(*lines: dict[str, Any]) -> dict[str, Any]:
    return {"endpoint": "/v1/chat/completions", "requests": list(lines)}


async def test_create_uploads_then_starts_the_batch_with_the_reference(fake: Fake) -> None:
    assert fake.profile.single_create is SingleCreate.LOOKUP
    found = await fake.create("batch", batch(line("a"), line("b")), ref="op_01REF")
    assert found.outcome is Outcome.OK and found.remote_job_id
    assert (found.remote_state, found.remote_class) == ("validating", RemoteClass.PENDING)
    upload = found.extra_exchanges[0]
    assert (upload.operation, upload.method, upload.status_code) == ("prepare", "POST", 200)
    assert upload.url.endswith("/v1/files")
    assert "jobgate-op_01REF.jsonl" in (upload.request_body or "")
    assert upload.request_headers["Authorization"] == "[redacted]"
    sent = json.loads(found.exchange.request_body or "{}")
    assert sent["metadata"] == {"jobgate_ref": "op_01REF"}
    assert sent["input_file_id"].startswith("file-")
    assert sent["completion_window"] == "24h"
    stats = await fake.stats()
    assert stats["jobs_by_reference"]["jobgate_ref=op_01REF"] == [found.remote_job_id]


async def test_success_collects_the_jsonl_output_and_counts(fake: Fake) -> None:
    created = await fake.create("batch", batch(line("a"), line("b"), line("c")))
    done = await fake.until_done(created.remote_job_id or "")
    assert (done.remote_state, done.remote_class) == ("completed", RemoteClass.SUCCEEDED)
    assert done.counts == Counts(total=3, succeeded=3, failed=0, not_processed=0)
    assert "error_file_id" not in done.fields
    got = await fake.client.result(fake.profile, created.remote_job_id or "", trace_id="t")
    assert got.outcome is Outcome.OK
    assert sorted(r["custom_id"] for r in got.result) == ["a", "b", "c"]
    assert got.failed_items == [] and got.items == {
        "succeeded": 3,
        "failed": 0,
        "not_processed": 0,
        "processed": 3,
    }
    output, errors = got.documents
    assert (output.name, output.lines, output.complete, output.sha256 is not None) == (
        "output",
        3,
        True,
        True,
    )
    assert errors.skipped and not errors.complete  # no error file: nothing failed
    # The status read that gave the file ids is part of the record.
    assert [e.operation for e in got.extra_exchanges] == ["status"]
    assert outcome(done.remote_class, got.counts).result is ResultClass.SUCCEEDED


async def test_partial_run_lists_failed_items_from_the_error_file(fake: Fake) -> None:
    created = await fake.create("batch", batch(line("a"), line("b", model="fail-nope")))
    done = await fake.until_done(created.remote_job_id or "")
    assert done.remote_class is RemoteClass.SUCCEEDED_PARTIAL
    got = await fake.client.result(
        fake.profile, created.remote_job_id or "", trace_id="t", status=done
    )
    assert got.extra_exchanges == [] or got.extra_exchanges[0].operation == "result"
    assert [r["custom_id"] for r in got.result] == ["a"]
    [failed] = got.failed_items
    assert (failed["id"], failed["status"], failed["document"]) == ("b", 404, "errors")
    assert failed["error"]["code"] == "model_not_found"
    assert got.items == {"succeeded": 1, "failed": 1, "not_processed": 0, "processed": 2}
    verdict = outcome(done.remote_class, got.counts)
    assert (verdict.result, verdict.keep_partial) == (ResultClass.COMPLETED_WITH_ERRORS, True)


async def test_every_request_failed_is_failed_with_the_items(fake: Fake) -> None:
    created = await fake.create(
        "batch", batch(line("a", model="fail-1"), line("b", model="fail-2"))
    )
    done = await fake.until_done(created.remote_job_id or "")
    assert (done.remote_state, done.remote_class) == ("completed", RemoteClass.FAILED)
    got = await fake.client.result(fake.profile, created.remote_job_id or "", trace_id="t")
    assert got.outcome is Outcome.OK and got.result == []  # no output file at all
    assert sorted(f["id"] for f in got.failed_items) == ["a", "b"]
    verdict = outcome(done.remote_class, got.counts)
    assert (verdict.result, verdict.collect) == (ResultClass.FAILED, True)


async def test_expired_batch_keeps_what_was_done_and_names_what_never_ran(fake: Fake) -> None:
    # 30 * 1024 tokens is 30 hours of work: past the 24-hour window.
    slow = line("slow", max_tokens=30 * 1024)
    created = await fake.create("batch", batch(line("a"), slow))
    job = created.remote_job_id or ""
    await fake.advance(job, 30)
    done = await fake.status(job)
    assert (done.remote_state, done.remote_class) == ("expired", RemoteClass.SUCCEEDED_PARTIAL)
    assert done.counts == Counts(total=2, succeeded=1, failed=0, not_processed=1)
    got = await fake.client.result(fake.profile, job, trace_id="t", status=done)
    assert [r["custom_id"] for r in got.result] == ["a"]
    [expired] = got.failed_items
    assert (expired["id"], expired["error"]["code"]) == ("slow", "batch_expired")
    assert got.items == {"succeeded": 1, "failed": 0, "not_processed": 1, "processed": 2}
    verdict = outcome(done.remote_class, got.counts)
    assert verdict.result is ResultClass.COMPLETED_WITH_ERRORS and verdict.keep_partial


async def test_cancel_then_cancelled_with_the_partial_output(fake: Fake) -> None:
    created = await fake.create("batch", batch(line("a"), line("slow", max_tokens=5 * 1024)))
    job = created.remote_job_id or ""
    await fake.advance(job, 2)  # validated, then one hour: "a" is done
    sent = await fake.client.cancel(fake.profile, job, trace_id="t", reason="not needed")
    assert (sent.outcome, sent.remote_state) == (Outcome.OK, "cancelling")
    assert sent.remote_class is RemoteClass.RUNNING  # a cancel sent is not a cancel done
    again = await fake.client.cancel(fake.profile, job, trace_id="t")
    assert again.outcome is Outcome.OK  # idempotent while cancelling
    done = await fake.until_done(job)
    assert (done.remote_state, done.remote_class) == ("cancelled", RemoteClass.CANCELLED)
    got = await fake.client.result(fake.profile, job, trace_id="t", status=done)
    assert [r["custom_id"] for r in got.result] == ["a"]
    verdict = outcome(done.remote_class, got.counts)
    assert (verdict.result, verdict.keep_partial) == (ResultClass.CANCELLED, True)


async def test_a_bad_input_line_fails_the_batch_with_its_error(fake: Fake) -> None:
    bad = {**line("a"), "url": "/v1/embeddings"}
    created = await fake.create("batch", batch(bad))
    done = await fake.until_done(created.remote_job_id or "")
    assert (done.remote_state, done.remote_class) == ("failed", RemoteClass.FAILED)
    assert done.error is not None and done.error["code"] == "invalid_url"


async def test_lookup_pages_the_listing_to_the_reference(fake: Fake) -> None:
    mine = await fake.create("batch", batch(line("a")), ref="op_01MINE")
    for i in range(5):  # newer batches push it past the first pages
        await fake.create("batch", batch(line("a")), ref=f"op_01OTHER{i}")
    assert fake.profile.lookup is not None
    small = fake.profile.lookup.model_copy(update={"page_size": 2})
    profile = fake.profile.model_copy(update={"lookup": small})
    found = await fake.client.lookup(
        profile, token=None, client_reference="op_01MINE", trace_id="t"
    )
    assert (found.outcome, found.job_ids) == (Outcome.OK, [mine.remote_job_id])
    assert found.pages == 3 and found.stopped == "end"
    assert "after=" in found.exchanges[1].url


async def test_lost_create_answer_leaves_one_batch_the_lookup_finds(fake: Fake) -> None:
    await fake.fault(op="create", kind="drop")
    lost = await fake.create("batch", batch(line("a")), ref="op_01LOST")
    assert lost.outcome is Outcome.AMBIGUOUS and lost.remote_job_id is None
    found = await fake.client.lookup(
        fake.profile, token=None, client_reference="op_01LOST", trace_id="t"
    )
    stats = await fake.stats()
    assert stats["jobs_by_reference"]["jobgate_ref=op_01LOST"] == found.job_ids
    assert len(found.job_ids) == 1


async def test_a_failed_upload_starts_nothing(fake: Fake) -> None:
    await fake.fault(op="upload", kind="error_before")
    found = await fake.create("batch", batch(line("a")), ref="op_01UP")
    assert found.outcome is Outcome.REJECTED and found.exchange.status_code == 503
    assert "the create was not sent" in (found.exchange.error or "")
    assert (await fake.stats())["create_calls"] == 0
    await fake.fault(op="upload", kind="rate_limit", retry_after=9)
    limited = await fake.create("batch", batch(line("a")), ref="op_01UP")
    assert (limited.outcome, limited.retry_after_seconds) == (Outcome.RATE_LIMITED, 9.0)


async def test_rate_limited_status_read_carries_retry_after(fake: Fake) -> None:
    created = await fake.create("batch", batch(line("a")))
    await fake.fault(op="retrieve", kind="rate_limit", retry_after=7)
    found = await fake.status(created.remote_job_id or "")
    assert (found.outcome, found.retry_after_seconds) == (Outcome.RATE_LIMITED, 7.0)


async def test_no_credential_sends_nothing(fake: Fake) -> None:
    client = type(fake.client)(fake.client._http, {"JOBGATE_OPENAI_BASE_URL": fake.url})
    found = await client.create(
        fake.profile, "batch", batch(line("a")), token="t", client_reference="op_1", trace_id="t"
    )
    assert found.outcome is Outcome.REJECTED and found.exchange.status_code is None
    assert "OPENAI_API_KEY is not set" in (found.exchange.error or "")
    assert fake.profile.unavailable({}) is not None
    assert (await fake.stats())["create_calls"] == 0


async def test_a_result_over_its_bound_is_never_read_whole(fake: Fake) -> None:
    created = await fake.create("batch", batch(*(line(f"r{i}") for i in range(20))))
    done = await fake.until_done(created.remote_job_id or "")
    assert fake.profile.result is not None
    docs = [d.model_copy(update={"max_bytes": 600}) for d in fake.profile.result.documents]
    small = fake.profile.model_copy(
        update={"result": fake.profile.result.model_copy(update={"documents": docs})}
    )
    got = await fake.client.result(small, created.remote_job_id or "", trace_id="t", status=done)
    assert got.outcome is Outcome.AMBIGUOUS
    [output] = got.documents
    assert output.truncated and not output.complete and output.bytes <= 600
    assert "exceeds max_bytes" in (got.exchange.error or "")
