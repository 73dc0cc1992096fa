"""The fal.ai queue fake, over HTTP: submit, status, result, cancel, errors and faults."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from jobgate_fakes.providers.fal_queue import create_app
from jobgate_fakes.providers.settings import FakeSettings
from tests.provider_fakes.conftest import client, fault, stats

KEY = "fal-key-id:fal-key-secret"
AUTH = {"Authorization": f"Key {KEY}"}


@pytest.fixture
def app() -> Any:
    return create_app(FakeSettings(api_key=KEY))


async def submit(
    c: httpx2.AsyncClient, app: str = "fal-ai/flux/dev", **args: Any
) -> dict[str, Any]:
    r = await c.post(f"/{app}", json={"prompt": "a cat", **args})
    assert r.status_code == 200, r.text
    return dict(r.json())


async def test_a_request_is_queued_run_and_answered_at_its_urls(app: Any) -> None:
    async with client(app, **AUTH) as c:
        made = await submit(c, queue_seconds=1, run_seconds=1, num_images=2)
        seen = [(await c.get(made["status_url"], params={"logs": "1"})).json() for _ in range(3)]
        result = (await c.get(made["response_url"])).json()
        counted = await stats(c)
    rid = made["request_id"]
    root = f"http://fake.test/fal-ai/flux/requests/{rid}"  # the app's sub-path is not in it
    assert (made["response_url"], made["status_url"], made["cancel_url"]) == (
        root, f"{root}/status", f"{root}/cancel",
    )  # fmt: skip
    assert [s["status"] for s in seen] == ["IN_QUEUE", "IN_PROGRESS", "COMPLETED"]
    assert seen[0]["queue_position"] == 0 and seen[1]["logs"]
    assert all(s["response_url"] == root for s in seen) and "error" not in seen[2]
    assert len(result["images"]) == 2 and result["has_nsfw_concepts"] == [False, False]
    assert counted["jobs"][rid] == {"status_calls": 3, "result_calls": 1}


async def test_failures_show_in_the_status_or_only_at_the_result(app: Any) -> None:
    async with client(app, **AUTH) as c:
        crashed = await submit(c, crash=True)
        r = await c.post("/fal-ai/flux", json={"num_images": 1})  # no prompt: found when run
        invalid = r.json()
        flagged = await submit(c, prompt="nsfw cat", num_images=2)
        await c.post("/_fake/advance", json={"steps": 5})
        crash_status = (await c.get(crashed["status_url"])).json()
        crash_result = await c.get(crashed["response_url"])
        invalid_status = (await c.get(invalid["status_url"])).json()
        invalid_result = await c.get(invalid["response_url"])
        flags = (await c.get(flagged["response_url"])).json()["has_nsfw_concepts"]
    assert crash_status["status"] == "COMPLETED" and "Internal error" in crash_status["error"]
    assert crash_result.status_code == 500
    assert invalid_status["status"] == "COMPLETED" and "error" not in invalid_status
    assert invalid_result.status_code == 422
    assert invalid_result.json()["detail"][0]["loc"] == ["body", "prompt"]
    assert flags == [False, True]


async def test_cancel_is_requested_or_already_completed(app: Any) -> None:
    async with client(app, **AUTH) as c:
        running = await submit(c, run_seconds=30)
        await c.get(running["status_url"])
        asked = await c.put(running["cancel_url"])
        ended = (await c.get(running["status_url"])).json()
        late = await submit(c)
        await c.post("/_fake/advance", json={"steps": 3})
        too_late = await c.put(late["cancel_url"])
        stubborn = await submit(c, run_seconds=2, ignore_cancel=True)
        await c.get(stubborn["status_url"])  # running: the app gets the signal, and ignores it
        await c.put(stubborn["cancel_url"])
        await c.post("/_fake/advance", json={"steps": 3})
        ran_on = (await c.get(stubborn["status_url"])).json()
    assert (asked.status_code, asked.json()) == (202, {"status": "CANCELLATION_REQUESTED"})
    assert ended["status"] == "COMPLETED" and ended["error_type"] == "request_cancelled"
    assert (too_late.status_code, too_late.json()) == (400, {"status": "ALREADY_COMPLETED"})
    assert ran_on["status"] == "COMPLETED" and "error" not in ran_on


async def test_auth_unknown_apps_and_a_free_text_429(app: Any) -> None:
    async with client(app) as anonymous, client(app, **AUTH) as c:
        bearer = await anonymous.post(
            "/fal-ai/flux", json={}, headers={"Authorization": f"Bearer {KEY}"}
        )
        missing = await c.post("/missing-owner/app", json={})
        await fault(c, op="submit", kind="rate_limit", retry_after=0)
        bare = await c.post("/fal-ai/flux", json={"prompt": "x"})
        await fault(c, op="submit", kind="rate_limit", retry_after=5)
        hinted = await c.post("/fal-ai/flux", json={"prompt": "x"})
        counted = await stats(c)
    assert bearer.status_code == 401 and "detail" in bearer.json()
    assert missing.status_code == 404
    assert (bare.status_code, bare.text) == (429, "Too Many Requests")
    assert "retry-after" not in bare.headers and hinted.headers["retry-after"] == "5"
    assert counted["create_calls"] == 3 and counted["jobs"] == {}  # the Bearer one was refused
