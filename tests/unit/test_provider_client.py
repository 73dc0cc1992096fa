"""The provider client against `httpx2.MockTransport`: classification and extraction."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest

from app.providers.calls.client import classify, parse_retry_after
from app.providers.calls.types import Outcome
from app.providers.language.profile import Profile
from app.providers.language.words import RemoteClass
from tests.unit.provider_fakes import (
    BASE,
    NOW,
    SECRET,
    answer,
    leaked,
    variant,
)

# -- classification -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        (200, Outcome.OK),
        (202, Outcome.OK),
        (404, Outcome.NOT_FOUND),
        (409, Outcome.CONFLICT),
        (429, Outcome.RATE_LIMITED),
        (408, Outcome.AMBIGUOUS),
        (500, Outcome.AMBIGUOUS),
        (503, Outcome.AMBIGUOUS),
        (302, Outcome.AMBIGUOUS),
        (400, Outcome.REJECTED),
        (401, Outcome.REJECTED),
        (422, Outcome.REJECTED),
    ],
)
def test_classify_responses(code: int, outcome: Outcome) -> None:
    assert classify(httpx2.Response(code)) is outcome


@pytest.mark.parametrize(
    "exc",
    [
        httpx2.ReadTimeout("slow"),
        httpx2.ConnectTimeout("slow"),
        httpx2.ConnectError("refused"),
        httpx2.ReadError("reset"),
        httpx2.RemoteProtocolError("dropped"),
        httpx2.UnsupportedProtocol("?"),
        TimeoutError(),
    ],
)
def test_classify_exceptions_are_ambiguous(exc: BaseException) -> None:
    assert classify(exc) is Outcome.AMBIGUOUS


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("code", "outcome"),
    [(404, Outcome.NOT_FOUND), (409, Outcome.CONFLICT), (503, Outcome.AMBIGUOUS)]
    + [(408, Outcome.AMBIGUOUS), (400, Outcome.REJECTED), (429, Outcome.RATE_LIMITED)],
)
async def test_status_call_classifies(
    make_client: Any, mock_profile: Profile, code: int, outcome: Outcome
) -> None:
    client, _ = make_client(answer(code, {"error": {"code": "x", "message": "no"}}))
    found = await client.status(mock_profile, "job_1", trace_id="tr_1")
    assert found.outcome is outcome
    assert found.exchange.status_code == code
    assert found.error == {"code": "x", "message": "no"}


@pytest.mark.anyio
@pytest.mark.parametrize(
    "exc",
    [httpx2.ReadTimeout("t"), httpx2.ConnectError("c"), httpx2.RemoteProtocolError("peer closed")],
)
async def test_transport_failures_on_create_are_ambiguous(
    make_client: Any, mock_profile: Profile, exc: Exception
) -> None:
    def boom(request: httpx2.Request) -> httpx2.Response:
        raise exc

    client, _ = make_client(boom)
    found = await client.create(
        mock_profile, "report", {}, token="tok", client_reference="op_1", trace_id="tr"
    )
    assert found.outcome is Outcome.AMBIGUOUS
    assert found.exchange.status_code is None
    assert found.exchange.error is not None and type(exc).__name__ in found.exchange.error
    assert found.exchange.request_headers["Idempotency-Key"] == "tok"


def test_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after("7", NOW) == 7.0
    assert parse_retry_after(" 1.5 ", NOW) == 1.5
    assert parse_retry_after("Mon, 06 Jan 2025 12:00:30 GMT", NOW) == 30.0
    assert parse_retry_after("Mon, 06 Jan 2025 11:00:00 GMT", NOW) == 0.0
    assert parse_retry_after("-3", NOW) == 0.0
    for bad in (None, "", "soon", "nan", "inf"):
        assert parse_retry_after(bad, NOW) is None


@pytest.mark.anyio
async def test_rate_limited_carries_retry_after(make_client: Any, mock_profile: Profile) -> None:
    client, _ = make_client(answer(429, {"error": {}}, **{"Retry-After": "7"}))
    found = await client.status(mock_profile, "job_1", trace_id="tr")
    assert (found.outcome, found.retry_after_seconds) == (Outcome.RATE_LIMITED, 7.0)
    date = "Mon, 06 Jan 2025 12:01:00 GMT"
    client, _ = make_client(answer(429, {}, **{"Retry-After": date}))
    found = await client.status(mock_profile, "job_1", trace_id="tr")
    assert found.retry_after_seconds == 60.0


# -- create ---------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_create_sends_what_the_profile_says(make_client: Any, mock_profile: Profile) -> None:
    body = {"job_id": "job_ab12", "state": "queued", "status_url": "/v1/jobs/job_ab12"}
    client, rec = make_client(answer(202, body | {"created": True}))
    found = await client.create(
        mock_profile,
        "report",
        {"scenario": {"name": "fast"}},
        token="tok-1",
        client_reference="op_1",
        trace_id="tr_1",
        worker="w-7",
    )
    request = rec.requests[0]
    assert (request.method, str(request.url)) == ("POST", f"{BASE}/v1/jobs")
    assert request.headers["Idempotency-Key"] == "tok-1"
    assert request.headers["X-Trace-Id"] == "tr_1"
    assert request.headers["X-Jobgate-Worker"] == "w-7"
    assert request.headers["Authorization"] == f"Bearer {SECRET}"
    assert json.loads(request.content) == {
        "kind": "report",
        "input": {"scenario": {"name": "fast"}},
        "client_reference": "op_1",
    }
    timeout = request.extensions["timeout"]
    assert (timeout["connect"], timeout["read"]) == (5.0, 30.0)
    assert found.outcome is Outcome.OK
    assert (found.remote_job_id, found.remote_state) == ("job_ab12", "queued")
    assert found.remote_class is RemoteClass.PENDING
    assert found.exchange.request_headers["Authorization"] == "[redacted]"
    assert found.exchange.operation == "create"
    assert not leaked(found)


@pytest.mark.anyio
async def test_synchronous_create_carries_the_inline_result(
    make_client: Any, mock_profile: Profile
) -> None:
    inline = {"data": {"rows": 3}, "sha256": "ab" * 32, "items": {"processed": 3, "succeeded": 3}}
    client, _ = make_client(
        answer(200, {"job_id": "job_1", "state": "succeeded", "result": inline})
    )
    found = await client.create(
        mock_profile, "report", {}, token="t", client_reference=None, trace_id="tr"
    )
    assert found.remote_class is RemoteClass.SUCCEEDED
    assert found.result == {"rows": 3}
    assert found.result_sha256 == "ab" * 32
    assert found.items == {"processed": 3, "succeeded": 3}


@pytest.mark.anyio
@pytest.mark.parametrize(
    "content", [b"<html>oops</html>", json.dumps({"state": "queued"}).encode()]
)
async def test_unreadable_2xx_create_is_ambiguous(
    make_client: Any, mock_profile: Profile, content: bytes
) -> None:
    client, _ = make_client(answer(202, content))
    found = await client.create(
        mock_profile, "report", {}, token="t", client_reference=None, trace_id="tr"
    )
    assert found.outcome is Outcome.AMBIGUOUS
    assert found.exchange.status_code == 202
    assert found.exchange.error in ("response body is not JSON", "response lacks the job_id")


@pytest.mark.anyio
async def test_idempotency_token_in_body(make_client: Any, mock_profile: Profile) -> None:
    profile = variant(
        mock_profile,
        idempotency={"location": "body", "pointer": "/request/idempotency_key"},
        client_reference={"location": "metadata", "pointer": "/metadata/jobgate_ref"},
    )
    client, rec = make_client(answer(202, {"job_id": "j", "state": "queued"}))
    await client.create(
        profile, "report", {"a": 1}, token="tok-9", client_reference="op_9", trace_id="t"
    )
    request = rec.requests[0]
    assert "Idempotency-Key" not in request.headers
    assert json.loads(request.content) == {
        "kind": "report",
        "input": {"a": 1},
        "request": {"idempotency_key": "tok-9"},
        "metadata": {"jobgate_ref": "op_9"},
    }


@pytest.mark.anyio
async def test_local_refusals_send_nothing(make_client: Any, mock_profile: Profile) -> None:
    client, rec = make_client(answer(202, {}))
    unknown = await client.create(
        mock_profile, "poem", {}, token="t", client_reference=None, trace_id="t"
    )
    required = variant(mock_profile, credentials={"env": "ACME_TOKEN"})
    no_credential = await client.status(required, "job_1", trace_id="t")
    no_token = await client.lookup(mock_profile, token=None, client_reference="op", trace_id="t")
    for found in (unknown, no_credential):
        assert found.outcome is Outcome.REJECTED
        assert found.exchange.status_code is None and found.exchange.error
    assert no_token.outcome is Outcome.REJECTED and no_token.stopped == "refused"
    assert [e.status_code for e in no_token.exchanges] == [None] and no_token.exchanges[0].error
    assert "ACME_TOKEN is not set" in (no_credential.exchange.error or "")
    assert rec.requests == []


# -- status, cancel, result, lookup ---------------------------------------------------------


@pytest.mark.anyio
async def test_status_extraction(make_client: Any, mock_profile: Profile) -> None:
    body = {
        "job_id": "job_1",
        "state": "running",
        "progress": {"completed": 146, "total": 500},
        "error": None,
        "poll_after_seconds": 30,
        "updated_at": "2025-01-06T12:00:00Z",
    }
    client, rec = make_client(answer(200, body))
    found = await client.status(mock_profile, "job_1", trace_id="tr")
    assert str(rec.requests[0].url) == f"{BASE}/v1/jobs/job_1"
    assert "Idempotency-Key" not in rec.requests[0].headers
    assert "X-Jobgate-Worker" not in rec.requests[0].headers
    assert found.outcome is Outcome.OK
    assert (found.remote_state, found.remote_class) == ("running", RemoteClass.RUNNING)
    assert (found.progress and (found.progress.completed, found.progress.total)) == (146, 500)
    assert found.poll_hint_seconds == 30.0 and found.error is None and found.result is None


@pytest.mark.anyio
async def test_status_failed_unknown_and_missing_state(
    make_client: Any, mock_profile: Profile
) -> None:
    err = {"code": "render_failed", "message": "boom"}
    client, _ = make_client(answer(200, {"job_id": "j", "state": "failed", "error": err}))
    found = await client.status(mock_profile, "j", trace_id="t")
    assert (found.remote_class, found.error) == (RemoteClass.FAILED, err)
    client, _ = make_client(answer(200, {"job_id": "j", "state": "MYSTERY"}))
    found = await client.status(mock_profile, "j", trace_id="t")
    assert (found.outcome, found.remote_class) == (Outcome.OK, RemoteClass.RUNNING)
    client, _ = make_client(answer(200, {"job_id": "j"}))
    found = await client.status(mock_profile, "j", trace_id="t")
    assert (found.outcome, found.remote_class) == (Outcome.AMBIGUOUS, None)


@pytest.mark.anyio
async def test_job_id_cannot_walk_the_path(make_client: Any, mock_profile: Profile) -> None:
    client, rec = make_client(answer(200, {"job_id": "x", "state": "running"}))
    await client.status(mock_profile, "../../admin", trace_id="t")
    await client.status(mock_profile, "..", trace_id="t")
    await client.status(mock_profile, "operations/123", trace_id="t")
    paths = [r.url.raw_path for r in rec.requests]
    assert paths == [
        b"/v1/jobs/%2E%2E%2F%2E%2E%2Fadmin",
        b"/v1/jobs/%2E%2E",
        b"/v1/jobs/operations/123",
    ]


@pytest.mark.anyio
async def test_cancel_accepted_and_conflict(make_client: Any, mock_profile: Profile) -> None:
    client, rec = make_client(answer(202, {"job_id": "j", "state": "cancelling"}))
    found = await client.cancel(mock_profile, "j", trace_id="t", reason="user asked")
    assert (rec.requests[0].method, rec.requests[0].url.path) == ("POST", "/v1/jobs/j/cancel")
    assert json.loads(rec.requests[0].content) == {"reason": "user asked"}
    assert (found.outcome, found.remote_class) == (Outcome.OK, RemoteClass.RUNNING)
    finished = {"error": {"code": "job_finished", "message": "done"}, "state": "succeeded"}
    client, rec = make_client(answer(409, finished))
    found = await client.cancel(mock_profile, "j", trace_id="t")
    assert json.loads(rec.requests[0].content) == {}
    assert (found.outcome, found.remote_state) == (Outcome.CONFLICT, "succeeded")
    assert found.error == {"code": "job_finished", "message": "done"}


@pytest.mark.anyio
async def test_result_extraction(make_client: Any, mock_profile: Profile) -> None:
    body = {
        "job_id": "j",
        "data": {"report": [1, 2]},
        "sha256": "cd" * 32,
        "items": {"processed": 100, "succeeded": 95, "failed": 5},
        "failed_items": [{"index": 3, "error": {"code": "bad", "message": "row 3"}}],
    }
    client, rec = make_client(answer(200, body))
    found = await client.result(mock_profile, "j", trace_id="t")
    assert rec.requests[0].url.path == "/v1/jobs/j/result"
    assert found.outcome is Outcome.OK
    assert (found.result, found.result_sha256) == ({"report": [1, 2]}, "cd" * 32)
    assert found.items == {"processed": 100, "succeeded": 95, "failed": 5}
    assert found.failed_items == body["failed_items"]
    client, _ = make_client(answer(503, {"error": {"code": "unavailable", "message": "later"}}))
    assert (await client.result(mock_profile, "j", trace_id="t")).outcome is Outcome.AMBIGUOUS


@pytest.mark.anyio
async def test_inline_result_without_result_endpoint(
    make_client: Any, mock_profile: Profile
) -> None:
    profile = variant(mock_profile, result=None)
    body = {"job_id": "j", "state": "succeeded", "result": {"data": [1], "sha256": "ef"}}
    client, rec = make_client(answer(200, body))
    found = await client.result(profile, "j", trace_id="t")
    assert rec.requests[0].url.path == "/v1/jobs/j"
    assert found.exchange.operation == "result"
    assert (found.outcome, found.result, found.result_sha256) == (Outcome.OK, [1], "ef")


@pytest.mark.anyio
async def test_lookup_by_token(make_client: Any, mock_profile: Profile) -> None:
    jobs = [{"job_id": "job_a", "state": "failed"}, {"job_id": "job_b", "state": "running"}]
    client, rec = make_client(answer(200, {"jobs": jobs}))
    found = await client.lookup(mock_profile, token="tok 1", client_reference=None, trace_id="t")
    assert rec.requests[0].url.path == "/v1/jobs"
    assert rec.requests[0].url.params["idempotency_key"] == "tok 1"
    assert (found.outcome, found.job_ids) == (Outcome.OK, ["job_a", "job_b"])
    client, _ = make_client(answer(200, {"jobs": []}))
    found = await client.lookup(mock_profile, token="t", client_reference=None, trace_id="t")
    assert (found.outcome, found.job_ids) == (Outcome.OK, [])
    client, _ = make_client(answer(200, {"nope": 1}))
    found = await client.lookup(mock_profile, token="t", client_reference=None, trace_id="t")
    assert found.outcome is Outcome.AMBIGUOUS


@pytest.mark.anyio
async def test_lookup_by_listing_and_matching_client_reference(
    make_client: Any, mock_profile: Profile
) -> None:
    lookup = {"path": "/v1/batches", "by": "client_reference", "jobs": "/data", "job_id": "/id"}
    profile = variant(mock_profile, lookup=lookup | {"match": "/metadata/ref"})
    listed = [
        {"id": "b1", "metadata": {"ref": "op_other"}},
        {"id": "b2", "metadata": {"ref": "op_1"}},
        {"id": "b3"},
    ]
    client, rec = make_client(answer(200, {"data": listed}))
    found = await client.lookup(profile, token=None, client_reference="op_1", trace_id="t")
    assert rec.requests[0].url.query == b""
    assert found.job_ids == ["b2"]


@pytest.mark.anyio
async def test_a_call_past_its_whole_call_bound_is_ambiguous(
    make_client: Any, mock_profile: Profile
) -> None:
    # `timeouts.seconds` bounds the whole call, however the transport's own timeouts go.
    async def never(request: httpx2.Request) -> httpx2.Response:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    client, recorder = make_client(never)
    bound = mock_profile.timeouts.model_copy(update={"seconds": 0.02})
    profile = mock_profile.model_copy(update={"timeouts": bound})
    found = await client.status(profile, "job_1", trace_id="tr_1")
    assert len(recorder.requests) == 1
    assert found.outcome is Outcome.AMBIGUOUS
    assert found.exchange.error is not None and found.exchange.error.startswith("TimeoutError")
