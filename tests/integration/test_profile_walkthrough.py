"""docs/profiles.md's worked example, end to end: the YAML a reader copies from the walk-through
goes into JOBGATE_PROFILES_DIR, and an agent drives a transcript through the gateway's own API
(create, status, result, history) against a small server shaped as AssemblyAI's transcript
reference shows it (https://www.assemblyai.com/docs/api-reference/transcripts, read 2026-12-01:
`POST /v2/transcript` answers the transcript object, `GET /v2/transcript/{id}` reads it,
`status` is queued|processing|completed|error, the raw key in `Authorization`, a 401 body
`{"error": "..."}`)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.conftest import Gateway
from tests.support.servers import serve_app

DOC = (Path(__file__).resolve().parents[2] / "docs" / "profiles.md").read_text(encoding="utf-8")
WALK = DOC[DOC.index("## Add your provider in ten minutes") : DOC.index("**6. Check it**")]
KEY = "aai-test-key-7f3c"


def transcripts_app() -> tuple[FastAPI, list[dict[str, Any]]]:
    """Transcripts that are `queued`, then `processing`, then `completed` (or `error` for an
    audio URL containing "missing"), one step per read, as the reference's lifecycle goes."""
    app, jobs, seen = FastAPI(), {}, []
    ids = itertools.count(1)

    def refuse(request: Request) -> JSONResponse | None:
        if request.headers.get("authorization") != KEY:
            return JSONResponse({"error": "Authentication error, API token missing/invalid"}, 401)
        return None

    @app.post("/v2/transcript")
    async def create(request: Request) -> JSONResponse:
        body = await request.json()
        seen.append({"headers": dict(request.headers), "body": body})
        if (refused := refuse(request)) is not None:
            return refused
        job = {"id": f"5551722-f677-48a6-9287-{next(ids):012d}", "status": "queued"}
        jobs[job["id"]] = job | {"audio_url": body["audio_url"], "reads": 0}
        return JSONResponse(job | {"audio_url": body["audio_url"], "text": None})

    @app.get("/v2/transcript/{job_id}")
    async def read(job_id: str, request: Request) -> JSONResponse:
        if (refused := refuse(request)) is not None:
            return refused
        job = jobs[job_id]
        job["reads"] += 1
        view = {"id": job_id, "audio_url": job["audio_url"], "status": "processing", "text": None}
        word = {"text": "Smoke", "start": 250, "end": 650, "confidence": 0.97}
        if job["reads"] >= 2 and "missing" in job["audio_url"]:
            view |= {
                "status": "error",
                "error": f"Download error, unable to download {job['audio_url']}",
            }
        elif job["reads"] >= 2:
            view |= {
                "status": "completed",
                "text": "Smoke from hundreds of wildfires.",
                "words": [word],
            }
        return JSONResponse(view)

    return app, seen


@pytest.fixture
def assemblyai(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    app, seen = transcripts_app()
    with serve_app(app) as url:
        monkeypatch.setenv("JOBGATE_ASSEMBLYAI_BASE_URL", url)
        monkeypatch.setenv("ASSEMBLYAI_API_KEY", KEY)
        yield seen


@pytest.fixture
def gateway_settings(tmp_path: Path, assemblyai: list[dict[str, Any]]) -> dict[str, Any]:
    """The walk-through's YAML blocks, in order, saved as the reader would save them."""
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    blocks = re.findall(r"```yaml\n(.*?)```", WALK, flags=re.S)
    (profiles / "assemblyai.yaml").write_text("".join(blocks))
    return {"profiles_dir": profiles}


async def create(gateway: Gateway, audio_url: str) -> dict[str, Any]:
    body = {"provider": "assemblyai", "kind": "transcript", "input": {"audio_url": audio_url}}
    r = await gateway.http.post("/v1/operations", json=body, headers={"Idempotency-Key": audio_url})
    assert r.status_code == 202, r.text
    return dict(r.json())


async def test_a_transcript_is_created_followed_and_its_result_collected(
    gateway: Gateway, assemblyai: list[dict[str, Any]]
) -> None:
    made = await create(gateway, "https://assembly.ai/wildfires.mp3")
    assert made["done"] is False and made["guarantees"]["single_create"] == "none"
    assert assemblyai[0]["body"] == {"audio_url": "https://assembly.ai/wildfires.mp3"}
    assert assemblyai[0]["headers"]["authorization"] == KEY

    op_id = made["operation_id"]
    done = await gateway.run_until_done(op_id)
    assert done["state"] == "succeeded", done
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert result["result"]["text"] == "Smoke from hundreds of wildfires."
    assert result["result"]["words"][0]["text"] == "Smoke"
    history = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()
    assert KEY not in str(history) and KEY not in str(done)


async def test_an_error_transcript_fails_with_the_providers_message(
    gateway: Gateway, assemblyai: list[dict[str, Any]]
) -> None:
    made = await create(gateway, "https://assembly.ai/missing.mp3")
    op_id = made["operation_id"]
    done = await gateway.run_until_done(op_id)
    assert done["state"] == "failed", done
    assert "unable to download https://assembly.ai/missing.mp3" in str(done)
    result = await gateway.http.get(f"/v1/operations/{op_id}/result")
    assert result.status_code != 200
