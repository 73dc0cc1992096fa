"""The OpenAI Batch fake, over HTTP: files, batch life, results, pagination, faults, webhooks."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from standardwebhooks.webhooks import Webhook

from jobgate_fakes.providers.openai_batch import create_app
from jobgate_fakes.providers.settings import FakeSettings
from tests.provider_fakes.conftest import SECRET, Receiver, client, fault, stats
from tests.support.servers import serve_app

KEY = "sk-test-123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}


def jsonl(*requests: dict[str, Any]) -> bytes:
    return "\n".join(json.dumps(r) for r in requests).encode()


def chat(custom_id: str, model: str = "gpt-4o-mini", max_tokens: int = 100) -> dict[str, Any]:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": max_tokens,
    }
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}


async def start(c: httpx2.AsyncClient, content: bytes, ref: str = "op_1") -> dict[str, Any]:
    up = await c.post("/v1/files", files={"file": ("in.jsonl", content)}, data={"purpose": "batch"})
    assert up.status_code == 200, up.text
    assert up.json()["purpose"] == "batch" and up.json()["object"] == "file"
    r = await c.post(
        "/v1/batches",
        json={
            "input_file_id": up.json()["id"],
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
            "metadata": {"jobgate_ref": ref},
        },
    )
    assert r.status_code == 200, r.text
    return dict(r.json())


async def read(c: httpx2.AsyncClient, batch_id: str) -> dict[str, Any]:
    r = await c.get(f"/v1/batches/{batch_id}")
    assert r.status_code == 200, r.text
    return dict(r.json())


async def lines(c: httpx2.AsyncClient, file_id: str) -> list[dict[str, Any]]:
    r = await c.get(f"/v1/files/{file_id}/content")
    assert r.status_code == 200
    return [json.loads(x) for x in r.text.splitlines()]


@pytest.fixture
def app() -> Any:
    return create_app(FakeSettings(api_key=KEY))


async def test_auth_errors_have_openai_bodies(app: Any) -> None:
    async with client(app) as c:
        missing = await c.get("/v1/batches")
        wrong = await c.get("/v1/batches", headers={"Authorization": "Bearer sk-wrong-000000"})
    assert missing.status_code == 401
    assert missing.json()["error"]["type"] == "invalid_request_error"
    assert "You didn't provide an API key" in missing.json()["error"]["message"]
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
    assert KEY not in wrong.text


async def test_batch_runs_to_completed_with_output_and_error_files(app: Any) -> None:
    content = jsonl(chat("a"), chat("b", model="fail-model"), chat("c", max_tokens=2048))
    async with client(app, **AUTH) as c:
        batch = await start(c, content, ref="op_ok")
        assert batch["status"] == "validating" and batch["object"] == "batch"
        assert batch["expires_at"] - batch["created_at"] == 86400
        seen = [await read(c, batch["id"]) for _ in range(4)]
        assert [b["status"] for b in seen] == [
            "in_progress",
            "in_progress",
            "finalizing",
            "completed",
        ]
        assert seen[1]["request_counts"] == {"total": 3, "completed": 1, "failed": 1}
        done = seen[-1]
        assert done["request_counts"] == {"total": 3, "completed": 2, "failed": 1}
        assert done["completed_at"] and done["in_progress_at"] and done["finalizing_at"]
        out = await lines(c, done["output_file_id"])
        err = await lines(c, done["error_file_id"])
        file_obj = (await c.get(f"/v1/files/{done['output_file_id']}")).json()
        numbers = await stats(c, "jobgate_ref=op_ok")
    assert sorted(x["custom_id"] for x in out) == ["a", "c"]
    assert all(x["error"] is None and x["response"]["status_code"] == 200 for x in out)
    assert out[0]["response"]["body"]["object"] == "chat.completion"
    assert [x["custom_id"] for x in err] == ["b"]
    assert err[0]["response"]["status_code"] == 404
    assert err[0]["response"]["body"]["error"]["code"] == "model_not_found"
    assert file_obj["purpose"] == "batch_output"
    assert numbers["creates_by_reference"] == {"jobgate_ref=op_ok": 1}
    assert numbers["jobs_by_reference"]["jobgate_ref=op_ok"] == [batch["id"]]
    assert numbers["jobs"][batch["id"]]["retrieve_calls"] == 4
    assert numbers["jobs"][batch["id"]]["content_calls"] == 2


async def test_expired_batch_keeps_partial_output(app: Any) -> None:
    content = jsonl(chat("quick"), chat("slow", max_tokens=30_000), chat("bad", model="fail-x"))
    async with client(app, **AUTH) as c:
        batch = await start(c, content)
        await c.post("/_fake/advance", json={"job_id": batch["id"], "steps": 23})
        assert (await read(c, batch["id"]))["status"] == "in_progress"
        done = await read(c, batch["id"])
        out = await lines(c, done["output_file_id"])
        err = await lines(c, done["error_file_id"])
    assert done["status"] == "expired" and done["expired_at"]
    assert done["request_counts"] == {"total": 3, "completed": 1, "failed": 1}
    assert [x["custom_id"] for x in out] == ["quick"]
    codes = {x["custom_id"]: (x["error"] or {}).get("code") for x in err}
    assert codes == {"bad": None, "slow": "batch_expired"}


async def test_invalid_input_file_fails_validation(app: Any) -> None:
    content = (
        b'{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {}}\nnot json'
    )
    async with client(app, **AUTH) as c:
        batch = await start(c, content)
        failed = await read(c, batch["id"])
    assert failed["status"] == "failed" and failed["failed_at"]
    assert failed["errors"]["object"] == "list"
    assert failed["errors"]["data"][0]["line"] == 2
    assert failed["output_file_id"] is None and failed["error_file_id"] is None


async def test_cancel_keeps_what_was_done(app: Any) -> None:
    content = jsonl(chat("a"), chat("b", max_tokens=5000))
    async with client(app, **AUTH) as c:
        batch = await start(c, content)
        await read(c, batch["id"])  # in_progress, hour 0
        await read(c, batch["id"])  # hour 1: "a" done
        cancelling = await c.post(f"/v1/batches/{batch['id']}/cancel")
        again = await c.post(f"/v1/batches/{batch['id']}/cancel")
        cancelled = await read(c, batch["id"])
        out = await lines(c, cancelled["output_file_id"])
        late = await c.post(f"/v1/batches/{batch['id']}/cancel")
        counts = (await stats(c))["jobs"][batch["id"]]
    assert cancelling.json()["status"] == "cancelling" and cancelling.json()["cancelling_at"]
    assert again.status_code == 200 and again.json()["status"] == "cancelling"
    assert cancelled["status"] == "cancelled" and cancelled["cancelled_at"]
    assert cancelled["error_file_id"] is None
    assert [x["custom_id"] for x in out] == ["a"]
    assert late.status_code == 400 and late.json()["error"]["type"] == "invalid_request_error"
    assert counts["cancel_calls"] == 3


async def test_list_is_newest_first_with_after_cursor(app: Any) -> None:
    async with client(app, **AUTH) as c:
        ids = [(await start(c, jsonl(chat("a")), ref=f"r{i}"))["id"] for i in range(3)]
        first = (await c.get("/v1/batches", params={"limit": 2})).json()
        rest = (await c.get("/v1/batches", params={"limit": 2, "after": first["last_id"]})).json()
        bad = await c.get("/v1/batches", params={"limit": 101})
    assert [b["id"] for b in first["data"]] == ids[::-1][:2]
    assert first["has_more"] is True and first["first_id"] == ids[2]
    assert [b["id"] for b in rest["data"]] == [ids[0]] and rest["has_more"] is False
    assert bad.status_code == 400


async def test_rate_limit_headers_and_429(app: Any) -> None:
    async with client(app, **AUTH) as c:
        ok = await c.get("/v1/batches")
        await fault(c, op="list", kind="rate_limit", retry_after=7)
        limited = await c.get("/v1/batches")
    assert ok.headers["x-ratelimit-limit-requests"] == "10000"
    assert int(ok.headers["x-ratelimit-remaining-requests"]) < 10000
    assert ok.headers["x-request-id"].startswith("req_")
    assert limited.status_code == 429 and limited.headers["retry-after"] == "7"
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert limited.headers["x-ratelimit-remaining-requests"] == "0"


async def test_create_faults_count_at_the_provider(app: Any) -> None:
    async with client(app, **AUTH) as c:
        await fault(c, op="create", kind="rate_limit", retry_after=3)
        with pytest.raises(AssertionError):
            await start(c, jsonl(chat("a")), ref="op_429")
        await fault(c, op="create", kind="error_after")
        with pytest.raises(AssertionError):
            await start(c, jsonl(chat("a")), ref="op_500")
        limited, failed = await stats(c, "jobgate_ref=op_429"), await stats(c, "jobgate_ref=op_500")
    assert limited["creates_by_reference"] == {"jobgate_ref=op_429": 1}
    assert limited["jobs_by_reference"] == {"jobgate_ref=op_429": []}
    assert len(failed["jobs_by_reference"]["jobgate_ref=op_500"]) == 1


def test_lost_create_response_leaves_the_batch_behind() -> None:
    with serve_app(create_app(FakeSettings(api_key=KEY))) as url:
        with httpx2.Client(base_url=url, headers=AUTH, timeout=5) as c:
            up = c.post(
                "/v1/files",
                files={"file": ("in.jsonl", jsonl(chat("a")))},
                data={"purpose": "batch"},
            )
            c.post("/_fake/faults", json={"op": "create", "kind": "drop"})
            body = {
                "input_file_id": up.json()["id"],
                "endpoint": "/v1/chat/completions",
                "completion_window": "24h",
                "metadata": {"ref": "lost"},
            }
            with pytest.raises(httpx2.RemoteProtocolError):
                c.post("/v1/batches", json=body)
            listed = c.get("/v1/batches").json()["data"]
            numbers = c.get("/_fake/stats", params={"reference": "ref=lost"}).json()
    assert [b["metadata"] for b in listed] == [{"ref": "lost"}]
    assert numbers["jobs_by_reference"]["ref=lost"] == [listed[0]["id"]]


async def test_batch_webhooks_are_standard_webhooks_signed(receiver: Receiver) -> None:
    app = create_app(FakeSettings(api_key=KEY, webhook_url=receiver.url, webhook_secret=SECRET))
    async with client(app, **AUTH) as c:
        batch = await start(c, jsonl(chat("a")))
        await c.post("/_fake/advance", json={"job_id": batch["id"], "steps": 3})
        flushed = (await c.post("/_fake/webhooks/flush")).json()["deliveries"]
    assert [d["type"] for d in flushed] == ["batch.completed"] and flushed[0]["status"] == 204
    got = receiver.received[0]
    event = Webhook(SECRET).verify(got["body"], got["headers"])
    assert event["type"] == "batch.completed" and event["data"] == {"id": batch["id"]}
    assert event["object"] == "event" and event["id"].startswith("evt_")


async def test_upload_rejects_non_jsonl_for_batch(app: Any) -> None:
    async with client(app, **AUTH) as c:
        r = await c.post("/v1/files", files={"file": ("in.csv", b"a,b")}, data={"purpose": "batch"})
        no_purpose = await c.post("/v1/files", files={"file": ("in.jsonl", b"{}")})
    assert r.status_code == 400 and r.json()["error"]["param"] == "file"
    assert no_purpose.status_code == 400
