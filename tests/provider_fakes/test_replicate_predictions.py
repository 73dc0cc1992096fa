"""The Replicate predictions fake over HTTP: sync and async create, statuses, list, webhooks."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from standardwebhooks.webhooks import Webhook

from jobgate_fakes.providers.replicate_predictions import create_app
from jobgate_fakes.providers.replicate_predictions.model import VERSION
from jobgate_fakes.providers.settings import FakeSettings
from tests.provider_fakes.conftest import SECRET, Receiver, client, fault, stats
from tests.support.servers import serve_app

TOKEN = "r8_test_token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def body(
    prompt: str = "hello big world", webhook: str | None = None, **inputs: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"version": VERSION, "input": {"prompt": prompt, **inputs}}
    if webhook:
        out["webhook"] = webhook
    return out


async def create(c: httpx2.AsyncClient, payload: dict[str, Any], **headers: str) -> dict[str, Any]:
    r = await c.post("/v1/predictions", json=payload, headers=headers)
    assert r.status_code == 201, r.text
    return dict(r.json())


async def get(c: httpx2.AsyncClient, prediction: dict[str, Any]) -> dict[str, Any]:
    r = await c.get(prediction["urls"]["get"])
    assert r.status_code == 200, r.text
    return dict(r.json())


@pytest.fixture
def app() -> Any:
    return create_app(FakeSettings(api_key=TOKEN, webhook_secret=SECRET, page_size=2))


async def test_auth_errors_are_problem_details(app: Any) -> None:
    async with client(app) as c:
        missing = await c.get("/v1/predictions")
        wrong = await c.get("/v1/predictions", headers={"Authorization": "Bearer nope"})
        legacy = await c.get("/v1/predictions", headers={"Authorization": f"Token {TOKEN}"})
    assert missing.status_code == 401
    assert missing.json() == {
        "title": "Unauthenticated",
        "detail": "You did not pass an authentication token",
        "status": 401,
    }
    assert wrong.status_code == 401 and legacy.status_code == 200


async def test_async_prediction_runs_through_its_statuses(app: Any) -> None:
    async with client(app, **AUTH) as c:
        p = await create(c, body(run_seconds=3, queue_seconds=1))
        assert p["status"] == "starting" and p["output"] is None and p["version"] == VERSION
        assert p["urls"]["cancel"].endswith(f"/v1/predictions/{p['id']}/cancel")
        seen = [await get(c, p) for _ in range(5)]
    assert [s["status"] for s in seen] == [
        "starting",
        "processing",
        "processing",
        "succeeded",
        "succeeded",
    ]
    assert seen[1]["output"] == ["hello"] and seen[1]["logs"] == "step 1/3"
    assert seen[1]["started_at"] and seen[1]["completed_at"] is None
    done = seen[3]
    assert done["output"] == ["hello", "big", "world"] and done["error"] is None
    assert done["metrics"]["predict_time"] == 3.0 and done["completed_at"]


async def test_prefer_wait_holds_the_create_on_the_fake_clock(app: Any) -> None:
    async with client(app, **AUTH) as c:
        sync = await create(c, body(run_seconds=5), Prefer="wait")
        short = await create(c, body(run_seconds=5), Prefer="wait=2")
        bad = await c.post("/v1/predictions", json=body(), headers={"Prefer": "wait=61"})
    assert sync["status"] == "succeeded" and sync["output"] == ["hello", "big", "world"]
    assert short["status"] == "processing" and short["logs"] == "step 1/5\nstep 2/5"
    assert bad.status_code == 400


async def test_failed_canceled_and_aborted(app: Any) -> None:
    async with client(app, **AUTH) as c:
        failed = await create(c, body(fail=True), Prefer="wait")
        running = await create(c, body(run_seconds=10))
        await get(c, running)
        canceled = (await c.post(running["urls"]["cancel"])).json()
        again = await c.post(running["urls"]["cancel"])
        queued = await create(c, body(queue_seconds=10), **{"Cancel-After": "3s"})
        late = await create(c, body(run_seconds=10), **{"Cancel-After": "3s"})
        aborted = [await get(c, queued) for _ in range(3)][-1]
        cut = [await get(c, late) for _ in range(3)][-1]
    assert failed["status"] == "failed" and failed["output"] is None
    assert failed["error"].startswith("fake model failure")
    assert canceled["status"] == "canceled" and canceled["completed_at"]
    assert again.status_code == 200 and again.json()["status"] == "canceled"
    assert aborted["status"] == "aborted" and aborted["started_at"] is None
    assert cut["status"] == "canceled" and cut["started_at"]


async def test_validation_errors_are_422(app: Any) -> None:
    async with client(app, **AUTH) as c:
        unknown = await c.post(
            "/v1/predictions", json={"version": "0" * 64, "input": {"prompt": "x"}}
        )
        invalid = await c.post(
            "/v1/predictions", json={"version": VERSION, "input": {"run_seconds": -1}}
        )
        model = await c.post(
            "/v1/models/jobgate/echo/predictions", json={"input": {"prompt": "a b"}}
        )
    assert (
        unknown.status_code == 422 and unknown.json()["title"] == "Invalid version or not permitted"
    )
    assert invalid.status_code == 422
    assert {f["field"] for f in invalid.json()["invalid_fields"]} == {"prompt", "run_seconds"}
    assert model.status_code == 201 and model.json()["model"] == "jobgate/echo"


async def test_list_follows_next_and_previous_urls(app: Any) -> None:
    async with client(app, **AUTH) as c:
        ids = [(await create(c, body()))["id"] for _ in range(3)]
        first = (await c.get("/v1/predictions")).json()
        second = (await c.get(first["next"])).json()
        back = (await c.get(second["previous"])).json()
    assert [p["id"] for p in first["results"]] == ids[::-1][:2] and first["previous"] is None
    assert [p["id"] for p in second["results"]] == [ids[0]] and second["next"] is None
    assert [p["id"] for p in back["results"]] == [p["id"] for p in first["results"]]


async def test_webhooks_follow_the_filter_and_verify(app: Any, receiver: Receiver) -> None:
    async with client(app, **AUTH) as c:
        secret = (await c.get("/v1/webhooks/default/secret")).json()["key"]
        filtered = body(webhook=receiver.url + "?op=op_7", run_seconds=2)
        filtered["webhook_events_filter"] = ["start", "completed"]
        p = await create(c, filtered)
        await c.post("/_fake/advance", json={"job_id": p["id"], "steps": 3})
        default = await create(c, body(webhook=receiver.url, run_seconds=1))
        await get(c, default)
        sent = (await c.post("/_fake/webhooks/flush")).json()["deliveries"]
    assert secret == SECRET
    assert [d["type"] for d in sent] == ["start", "completed", "completed"]
    bodies = [Webhook(SECRET).verify(r["body"], r["headers"]) for r in receiver.received]
    assert [b["status"] for b in bodies] == ["starting", "succeeded", "succeeded"]
    assert bodies[1]["id"] == p["id"] and bodies[1]["output"] == ["hello", "big", "world"]


async def test_rate_limited_create_and_counts_by_webhook(app: Any) -> None:
    hook = "https://gw.example/v1/webhooks/replicate?op=op_9"
    async with client(app, **AUTH) as c:
        await fault(c, op="create", kind="rate_limit", retry_after=2)
        limited = await c.post("/v1/predictions", json=body(webhook=hook))
        await create(c, body(webhook=hook))
        numbers = await stats(c, hook)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
    assert limited.json() == {"detail": "Request was throttled. Expected available in 2 seconds."}
    assert (
        numbers["creates_by_reference"] == {hook: 2}
        and len(numbers["jobs_by_reference"][hook]) == 1
    )


def test_lost_and_slow_create_responses_still_make_the_prediction() -> None:
    with serve_app(create_app(FakeSettings(api_key=TOKEN))) as url:
        with httpx2.Client(base_url=url, headers=AUTH, timeout=5) as c:
            c.post(
                "/_fake/faults",
                json=[
                    {"op": "create", "kind": "drop"},
                    {"op": "get", "kind": "delay", "delay_ms": 300},
                ],
            )
            with pytest.raises(httpx2.RemoteProtocolError):
                c.post("/v1/predictions", json=body(webhook="https://x.test/h?op=lost"))
            listed = c.get("/v1/predictions").json()["results"]
            with pytest.raises(httpx2.ReadTimeout):
                c.get(f"/v1/predictions/{listed[0]['id']}", timeout=0.1)
            after = c.get(f"/v1/predictions/{listed[0]['id']}").json()
    assert len(listed) == 1 and listed[0]["status"] == "starting"
    assert after["status"] == "succeeded"  # the timed-out read still moved the clock
