"""The provider client never lets a credential or an unbounded body through."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from app.providers.calls.types import Outcome
from app.providers.language.profile import Profile
from tests.unit.provider_fakes import (
    SECRET,
    answer,
    leaked,
    variant,
)

# -- secrets, truncation, size ---------------------------------------------------------------


@pytest.mark.anyio
async def test_echoed_secret_never_reaches_the_exchange(
    make_client: Any, mock_profile: Profile
) -> None:
    echo = {
        "job_id": "job_1",
        "state": "queued",
        "error": {"message": f"you sent Bearer {SECRET}"},
        SECRET: "key too",
    }
    headers = {"X-Echo": f"Bearer {SECRET}", "Set-Cookie": "sid=abc"}
    client, _ = make_client(answer(401, echo, **headers))
    found = await client.create(
        mock_profile, "report", {}, token="t", client_reference=None, trace_id="tr"
    )
    assert found.outcome is Outcome.REJECTED
    assert found.exchange.response_headers["Set-Cookie"] == "[redacted]"
    assert "[redacted]" in (found.exchange.response_body or "")
    assert found.error == {"message": "you sent Bearer [redacted]"}
    assert not leaked(found)


@pytest.mark.anyio
async def test_secret_in_transport_error_is_scrubbed(
    make_client: Any, mock_profile: Profile
) -> None:
    def boom(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError(f"proxy said: {request.headers['Authorization']}")

    client, _ = make_client(boom)
    found = await client.status(mock_profile, "j", trace_id="t")
    assert found.outcome is Outcome.AMBIGUOUS
    assert "[redacted]" in (found.exchange.error or "")
    assert not leaked(found)


@pytest.mark.anyio
async def test_optional_credential_absent_and_header_type(
    make_client: Any, mock_profile: Profile
) -> None:
    client, rec = make_client(answer(200, {"job_id": "j", "state": "running"}), env={})
    await client.status(mock_profile, "j", trace_id="t")
    assert "Authorization" not in rec.requests[0].headers
    profile = variant(
        mock_profile, credentials={"type": "header", "header": "X-Api-Key", "env": "K"}
    )
    client, rec = make_client(answer(200, {"job_id": "j", "state": "running"}), env={"K": "k-1"})
    found = await client.status(profile, "j", trace_id="t")
    assert rec.requests[0].headers["X-Api-Key"] == "k-1"
    assert found.exchange.request_headers["X-Api-Key"] == "[redacted]"


@pytest.mark.anyio
async def test_bodies_are_truncated(make_client: Any, mock_profile: Profile) -> None:
    big = {"job_id": "j", "state": "running", "pad": "x" * 5000}
    client, _ = make_client(answer(200, big), body_limit=100)
    found = await client.create(
        mock_profile, "report", {"pad": "y" * 500}, token="t", client_reference=None, trace_id="t"
    )
    assert found.outcome is Outcome.OK and found.body == big
    for text in (found.exchange.response_body, found.exchange.request_body):
        assert text is not None and len(text) < 140 and "...[truncated" in text


@pytest.mark.anyio
async def test_oversized_body_is_not_parsed(make_client: Any, mock_profile: Profile) -> None:
    profile = variant(mock_profile, validation={"max_bytes": 10})
    huge = {"job_id": "j", "state": "succeeded", "pad": "z" * 70_000}
    client, _ = make_client(answer(200, huge))
    found = await client.status(profile, "j", trace_id="t")
    assert (found.outcome, found.body) == (Outcome.AMBIGUOUS, None)
    assert "exceeds" in (found.exchange.error or "")


@pytest.mark.anyio
async def test_secret_hidden_in_unicode_escapes_is_scrubbed(
    make_client: Any, mock_profile: Profile
) -> None:
    escaped = "".join(f"\\u{ord(c):04x}" for c in SECRET)
    content = ('{"job_id": "j", "state": "running", "note": "' + escaped + '"}').encode()
    client, _ = make_client(answer(200, content))
    found = await client.status(mock_profile, "j", trace_id="t")
    assert found.outcome is Outcome.OK
    assert isinstance(found.body, dict) and found.body["note"] == "[redacted]"
    assert not leaked(found)


@pytest.mark.anyio
async def test_result_not_ready_keeps_the_provider_error(
    make_client: Any, mock_profile: Profile
) -> None:
    err = {"code": "not_finished", "message": "still running"}
    client, _ = make_client(answer(409, {"error": err}))
    found = await client.result(mock_profile, "j", trace_id="t")
    assert (found.outcome, found.error, found.result) == (Outcome.CONFLICT, err, None)


@pytest.mark.anyio
async def test_unserializable_input_is_refused_before_sending(
    make_client: Any, mock_profile: Profile
) -> None:
    client, rec = make_client(answer(202, {"job_id": "j", "state": "queued"}))
    found = await client.create(
        mock_profile, "report", {"when": object()}, token="t", client_reference=None, trace_id="t"
    )
    assert found.outcome is Outcome.REJECTED and rec.requests == []
    assert "cannot build the request" in (found.exchange.error or "")
