"""The Anthropic Message Batches fake, over HTTP: headers, life, results, pagination, faults."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from jobgate_fakes.providers.anthropic_batches import create_app
from jobgate_fakes.providers.settings import FakeSettings
from tests.provider_fakes.conftest import client, fault, stats

KEY = "sk-ant-test"
HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
BATCHES = "/v1/messages/batches"


def req(custom_id: str, model: str = "claude-sonnet-4-5", max_tokens: int = 1024) -> dict[str, Any]:
    params = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    return {"custom_id": custom_id, "params": params}


async def create(c: httpx2.AsyncClient, *requests: dict[str, Any]) -> dict[str, Any]:
    r = await c.post(BATCHES, json={"requests": list(requests)})
    assert r.status_code == 200, r.text
    return dict(r.json())


async def read(c: httpx2.AsyncClient, batch_id: str) -> dict[str, Any]:
    return dict((await c.get(f"{BATCHES}/{batch_id}")).json())


async def results(c: httpx2.AsyncClient, url: str) -> dict[str, dict[str, Any]]:
    r = await c.get(url)
    assert r.status_code == 200, r.text
    return {x["custom_id"]: x["result"] for x in map(json.loads, r.text.splitlines())}


@pytest.fixture
def app() -> Any:
    return create_app(FakeSettings(api_key=KEY))


async def test_headers_are_required_with_anthropic_error_bodies(app: Any) -> None:
    async with client(app) as c:
        no_key = await c.get(BATCHES)
        wrong = await c.get(BATCHES, headers={**HEADERS, "x-api-key": "nope"})
        no_version = await c.get(BATCHES, headers={"x-api-key": KEY})
        missing = await c.get(f"{BATCHES}/msgbatch_nope", headers=HEADERS)
    assert no_key.status_code == 401
    assert no_key.json()["type"] == "error"
    assert no_key.json()["error"] == {
        "type": "authentication_error",
        "message": "x-api-key header is required",
    }
    assert wrong.status_code == 401 and wrong.json()["error"]["message"] == "invalid x-api-key"
    assert no_version.status_code == 400
    assert no_version.json()["error"]["type"] == "invalid_request_error"
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"
    assert no_key.headers["request-id"].startswith("req_")


async def test_batch_ends_with_succeeded_and_errored_results(app: Any) -> None:
    async with client(app, **HEADERS) as c:
        batch = await create(
            c,
            req("ok-1"),
            req("bad", model="fail-model"),
            req("slow", max_tokens=3000),
            {"custom_id": "no-max", "params": {"model": "claude-x", "messages": []}},
        )
        assert batch["type"] == "message_batch" and batch["processing_status"] == "in_progress"
        assert batch["request_counts"]["processing"] == 4 and batch["results_url"] is None
        seen = [await read(c, batch["id"]) for _ in range(3)]
        ended = seen[-1]
        got = await results(c, ended["results_url"])
        numbers = await stats(c, "ok-1")
    assert [b["processing_status"] for b in seen] == ["in_progress", "in_progress", "ended"]
    assert seen[1]["request_counts"]["succeeded"] == 0  # zero until the batch has ended
    assert ended["request_counts"] == {
        "processing": 0,
        "succeeded": 2,
        "errored": 2,
        "canceled": 0,
        "expired": 0,
    }
    assert ended["ended_at"] and ended["results_url"].endswith(f"/{batch['id']}/results")
    assert got["ok-1"]["type"] == "succeeded"
    assert got["ok-1"]["message"]["content"][0]["type"] == "text"
    assert got["bad"]["error"]["error"]["type"] == "not_found_error"
    assert got["no-max"]["error"]["type"] == "error"
    assert got["no-max"]["error"]["error"] == {
        "type": "invalid_request_error",
        "message": "max_tokens: Field required",
    }
    assert numbers["jobs_by_reference"] == {"ok-1": [batch["id"]]}
    assert numbers["jobs"][batch["id"]]["retrieve_calls"] == 3


async def test_expiry_and_cancel_leave_typed_results(app: Any) -> None:
    async with client(app, **HEADERS) as c:
        expiring = await create(c, req("quick"), req("huge", max_tokens=40_000))
        await c.post("/_fake/advance", json={"job_id": expiring["id"], "steps": 23})
        expired = await read(c, expiring["id"])
        cancelled = await create(c, req("fast"), req("long", max_tokens=10_000))
        await read(c, cancelled["id"])
        canceling = await c.post(f"{BATCHES}/{cancelled['id']}/cancel")
        after = await read(c, cancelled["id"])
        late = await c.post(f"{BATCHES}/{cancelled['id']}/cancel")
        got_expired = await results(c, expired["results_url"])
        got_cancelled = await results(c, after["results_url"])
    assert expired["processing_status"] == "ended"
    assert expired["request_counts"]["expired"] == 1 and expired["request_counts"]["succeeded"] == 1
    assert got_expired == {"quick": got_expired["quick"], "huge": {"type": "expired"}}
    assert canceling.json()["processing_status"] == "canceling"
    assert canceling.json()["cancel_initiated_at"]
    assert after["request_counts"]["canceled"] == 1 and after["request_counts"]["succeeded"] == 1
    assert got_cancelled["long"] == {"type": "canceled"}
    assert late.status_code == 400


async def test_create_validates_the_envelope(app: Any) -> None:
    async with client(app, **HEADERS) as c:
        empty = await c.post(BATCHES, json={"requests": []})
        dup = await c.post(BATCHES, json={"requests": [req("a"), req("a")]})
        bad_id = await c.post(BATCHES, json={"requests": [req("has space")]})
        not_json = await c.post(BATCHES, content=b"{", headers={"content-type": "application/json"})
    for r in (empty, dup, bad_id, not_json):
        assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"


async def test_results_and_delete_before_end_are_refused(app: Any) -> None:
    async with client(app, **HEADERS) as c:
        batch = await create(c, req("a", max_tokens=5000))
        early = await c.get(f"{BATCHES}/{batch['id']}/results")
        delete_early = await c.delete(f"{BATCHES}/{batch['id']}")
        await c.post("/_fake/advance", json={"steps": 5})
        deleted = await c.delete(f"{BATCHES}/{batch['id']}")
        gone = await c.get(f"{BATCHES}/{batch['id']}")
    assert early.status_code == 400 and delete_early.status_code == 400
    assert deleted.json() == {"id": batch["id"], "type": "message_batch_deleted"}
    assert gone.status_code == 404


async def test_list_pages_with_before_and_after_ids(app: Any) -> None:
    async with client(app, **HEADERS) as c:
        ids = [(await create(c, req(f"r{i}")))["id"] for i in range(5)]
        newest = ids[::-1]
        first = (await c.get(BATCHES, params={"limit": 2})).json()
        second = (await c.get(BATCHES, params={"limit": 2, "after_id": first["last_id"]})).json()
        back = (await c.get(BATCHES, params={"limit": 2, "before_id": second["first_id"]})).json()
        too_big = await c.get(BATCHES, params={"limit": 1001})
    assert [b["id"] for b in first["data"]] == newest[:2] and first["has_more"] is True
    assert first["first_id"] == newest[0] and first["last_id"] == newest[1]
    assert [b["id"] for b in second["data"]] == newest[2:4]
    assert [b["id"] for b in back["data"]] == newest[:2] and back["has_more"] is False
    assert too_big.status_code == 400


async def test_rate_limit_headers_429_and_overloaded(app: Any) -> None:
    async with client(app, **HEADERS) as c:
        ok = await c.get(BATCHES)
        await fault(c, op="create", kind="rate_limit", retry_after=9)
        limited = await c.post(BATCHES, json={"requests": [req("x")]})
        await fault(c, op="create", kind="error_after", status=529)
        overloaded = await c.post(BATCHES, json={"requests": [req("y")]})
        numbers = await stats(c)
    assert ok.headers["anthropic-ratelimit-requests-limit"] == "4000"
    assert ok.headers["anthropic-ratelimit-requests-reset"].endswith("Z")
    assert limited.status_code == 429 and limited.headers["retry-after"] == "9"
    assert limited.json()["error"]["type"] == "rate_limit_error"
    assert (
        overloaded.status_code == 529 and overloaded.json()["error"]["type"] == "overloaded_error"
    )
    assert numbers["creates_by_reference"] == {"x": 1, "y": 1}
    assert numbers["jobs_by_reference"]["x"] == [] and len(numbers["jobs_by_reference"]["y"]) == 1
