"""The bundled `google_document_ai` profile (AIP-151 with an adapter) driven end to end
through the agent API.

The Document AI fake (jobgate_fakes/providers/google_document_ai, built from Google's v1
reference) answers `batchProcess` with a long-running operation; each read processes a
document; a document whose mimeType Document AI does not take fails with code 3, one
whose object name starts with `fail` fails with code 13, and an operation whose every
document failed is done with an `error` (code 3) and no `response`. A partial failure is
done with `metadata.state: SUCCEEDED`: the case a gateway must never report as success.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx2

from tests.conftest import Gateway
from tests.integration.profiles.conftest import (
    KEY,
    STEP,
    errors_of,
    fault,
    finish,
    history,
    never_success,
    summary_is,
)
from tests.integration.profiles.lost_create import create, goes_to_a_person
from tests.integration.profiles.rate_limit import honours_retry_hint

NAME = "google_document_ai"
KIND = "batch_process"
EXTRA_ENV = {"GOOGLE_CLOUD_PROJECT": "my-project"}
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def batch(*docs: tuple[str, str]) -> dict[str, Any]:
    """A BatchProcessRequest (plus the processor id) for these (name, mimeType) documents."""
    return {
        "processor": "a1b2c3d4e5f60718",
        "inputDocuments": {
            "gcsDocuments": {
                "documents": [{"gcsUri": f"gs://in-bucket/{n}", "mimeType": t} for n, t in docs]
            }
        },
        "documentOutputConfig": {"gcsOutputConfig": {"gcsUri": f"gs://out-bucket/{uuid.uuid4()}/"}},
        "skipHumanReview": True,
    }


async def start(gateway: Gateway, *docs: tuple[str, str]) -> str:
    made = await create(gateway, NAME, KIND, batch(*docs))
    assert made["done"] is False and made["guarantees"]["single_create"] == "none", made
    return str(made["operation_id"])


async def test_every_document_processed_is_success_with_where_each_was_written(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, ("a.pdf", PDF), ("b.pdf", PDF))
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    summary_is(done, processed=2, succeeded=2, failed=0, not_processed=0)
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()["result"]
    assert [d["input"] for d in result] == ["gs://in-bucket/a.pdf", "gs://in-bucket/b.pdf"]
    assert all(d["output"].startswith("gs://out-bucket/") for d in result)
    assert KEY not in str(await history(gateway, op_id))


async def test_succeeded_with_failed_documents_is_never_success(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    """Google says SUCCEEDED; two of its three documents failed: completed_with_errors,
    each failed document at /errors with Google's status, the one done offered."""
    op_id = await start(gateway, ("a.pdf", PDF), ("b.docx", DOCX), ("fail-c.pdf", PDF))
    done = await finish(gateway, op_id)
    assert done["remote_state"] == "SUCCEEDED"
    assert (done["state"], done["outcome"]) == ("succeeded", "completed_with_errors"), done
    never_success(done)
    summary_is(done, processed=3, succeeded=1, failed=2, not_processed=0)
    failed = await errors_of(gateway, op_id)
    assert [(f["id"], f["status"]) for f in failed] == [
        ("gs://in-bucket/b.docx", "INVALID_ARGUMENT"),
        ("gs://in-bucket/fail-c.pdf", "INTERNAL"),
    ]
    assert failed[0]["error"]["code"] == 3
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()["result"]
    assert [d["input"] for d in result] == ["gs://in-bucket/a.pdf"]


async def test_every_document_failed_is_failed_with_each_listed(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, ("fail-a.pdf", PDF), ("b.docx", DOCX))
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    never_success(done)
    assert [f["id"] for f in await errors_of(gateway, op_id)] == [
        "gs://in-bucket/fail-a.pdf",
        "gs://in-bucket/b.docx",
    ]
    assert (await gateway.http.get(f"/v1/operations/{op_id}/result")).status_code == 409


async def test_cancel_keeps_the_documents_done_and_lists_the_rest(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, *[(f"d{i}.pdf", PDF) for i in range(6)])
    for _ in range(3):  # WAITING, RUNNING, then one document per read
        await gateway.tick(STEP)
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("cancelled", "cancelled"), done
    never_success(done)
    summary = done["result_summary"]
    assert summary["processed"] == 6 and summary["failed"] == 0
    assert summary["succeeded"] + summary["not_processed"] == 6 and summary["not_processed"] > 0
    stopped = await errors_of(gateway, op_id)
    assert len(stopped) == summary["not_processed"]
    assert {f["status"] for f in stopped} == {"CANCELLED"}
    if summary["succeeded"]:
        kept = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
        assert len(kept["result"]) == summary["succeeded"]
        assert f"{summary['succeeded']} item" in done["message"]
    stats = (await fake.get("/_fake/stats")).json()
    [calls] = stats["jobs"].values()
    assert calls["cancel_calls"] == 1


async def test_a_lost_create_answer_is_never_resent_and_goes_to_a_person(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="create", kind="drop")
    made = await create(gateway, NAME, KIND, batch(("a.pdf", PDF)))
    await goes_to_a_person(gateway, made)
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == 1 and len(stats["jobs"]) == 1


async def test_rate_limited_read_waits_for_retry_info(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, ("a.pdf", PDF), ("b.pdf", PDF))
    limited = await honours_retry_hint(gateway, fake, op_id, op="get", hint=1000, step=STEP)
    assert "google.rpc.RetryInfo" in limited["response_body"]
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done


async def test_a_failing_status_read_is_retried_and_never_decides(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, ("a.pdf", PDF), ("fail-b.pdf", PDF))
    await fault(fake, op="get", kind="error_before", status=503)
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "completed_with_errors"), done
    rows = await history(gateway, op_id)
    assert any(e["kind"] == "exchange" and e["data"]["status_code"] == 503 for e in rows)
