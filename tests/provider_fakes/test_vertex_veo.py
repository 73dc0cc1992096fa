"""The Vertex AI Veo fake, over HTTP: the operation's life, the safety filter, errors."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from jobgate_fakes.providers.settings import FakeSettings
from jobgate_fakes.providers.vertex_veo import create_app
from tests.provider_fakes.conftest import client, fault, stats

TOKEN = "ya29.fake-access-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MODELS = "/v1/projects/my-project/locations/us-central1/publishers/google/models"
MODEL = "veo-3.0-generate-001"
CREATE = f"{MODELS}/{MODEL}:predictLongRunning"
FETCH = f"{MODELS}/{MODEL}:fetchPredictOperation"


def body(prompt: str = "a cat", **params: Any) -> dict[str, Any]:
    return {"instances": [{"prompt": prompt}], "parameters": params, "labels": {"ref": "op1"}}


@pytest.fixture
def app() -> Any:
    return create_app(FakeSettings(api_key=TOKEN))


async def fetch(c: httpx2.AsyncClient, name: str) -> dict[str, Any]:
    r = await c.post(FETCH, json={"operationName": name})
    assert r.status_code == 200, r.text
    return dict(r.json())


async def test_an_operation_runs_without_done_then_holds_its_videos(app: Any) -> None:
    async with client(app, **AUTH) as c:
        r = await c.post(CREATE, json=body(sampleCount=2, durationSeconds=4, storageUri="gs://b/v"))
        assert r.status_code == 200, r.text
        name = r.json()["name"]
        assert name.startswith("projects/") and f"/models/{MODEL}/operations/" in name
        reads = [await fetch(c, name) for _ in range(5)]
        found = await stats(c, "ref=op1")
    assert reads[0] == {"name": name}  # proto3 JSON: no `done: false`
    done = reads[-1]
    assert done["done"] is True
    videos = done["response"]["videos"]
    assert [v["mimeType"] for v in videos] == ["video/mp4", "video/mp4"]
    assert all(v["gcsUri"].startswith("gs://b/v/") for v in videos)
    assert "raiMediaFilteredCount" not in done["response"]
    assert found["jobs"][name] == {"fetch_calls": 5}


async def test_the_filter_blanks_samples_and_a_crash_is_an_error(app: Any) -> None:
    async with client(app, **AUTH) as c:
        some = await c.post(CREATE, json=body("unsafe cat", sampleCount=3, durationSeconds=4))
        every = await c.post(CREATE, json=body("unsafe unsafe", sampleCount=2, durationSeconds=4))
        crash = await c.post(CREATE, json=body("crash", durationSeconds=4))
        await c.post("/_fake/advance", json={"steps": 5})
        partial = await fetch(c, some.json()["name"])
        blanked = await fetch(c, every.json()["name"])
        failed = await fetch(c, crash.json()["name"])
    assert partial["response"]["raiMediaFilteredCount"] == 1
    assert len(partial["response"]["videos"]) == 2
    assert "bytesBase64Encoded" in partial["response"]["videos"][0]  # no storageUri
    assert "videos" not in blanked["response"]
    assert len(blanked["response"]["raiMediaFilteredReasons"]) == 2
    assert failed["error"]["code"] == 13 and "response" not in failed


async def test_errors_are_google_rpc_statuses_and_there_is_no_get(app: Any) -> None:
    async with client(app) as anonymous, client(app, **AUTH) as c:
        unauthenticated = await anonymous.post(CREATE, json=body())
        bad = await c.post(CREATE, json=body(sampleCount=9))
        missing = await c.post(f"{MODELS}/missing-model:predictLongRunning", json=body())
        name = (await c.post(CREATE, json=body())).json()["name"]
        no_body = await c.post(FETCH, json={})
        get = await c.get(f"/v1/{name}")
        other_model = await c.post(
            f"{MODELS}/veo-2.0-generate-001:fetchPredictOperation", json={"operationName": name}
        )
    assert unauthenticated.status_code == 401
    assert unauthenticated.json()["error"]["status"] == "UNAUTHENTICATED"
    assert bad.status_code == 400 and bad.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert missing.status_code == 404
    assert no_body.status_code == 400
    assert get.status_code == 404
    assert other_model.status_code == 400


async def test_throttling_with_and_without_retry_info(app: Any) -> None:
    async with client(app, **AUTH) as c:
        await fault(c, op="create", kind="rate_limit", retry_after=7)
        hinted = await c.post(CREATE, json=body())
        await fault(c, op="create", kind="rate_limit", retry_after=0)
        bare = await c.post(CREATE, json=body())
        counted = await stats(c)
    assert hinted.status_code == bare.status_code == 429
    assert "retry-after" not in hinted.headers
    details = hinted.json()["error"]["details"]
    assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"} in details
    assert "RetryInfo" not in bare.text
    assert counted["create_calls"] == 2 and counted["jobs"] == {}
