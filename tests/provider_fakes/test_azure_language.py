"""The Azure AI Language jobs fake, over HTTP: Operation-Location, statuses, paging, faults."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from jobgate_fakes.providers.azure_language import create_app
from jobgate_fakes.providers.settings import FakeSettings
from tests.provider_fakes.conftest import client, fault, stats

KEY = "0123456789abcdef0123456789abcdef"
AUTH = {"Ocp-Apim-Subscription-Key": KEY}
JOBS = "/language/analyze-text/jobs"
V = {"api-version": "2023-04-01"}


def job(
    *texts: str, tasks: tuple[dict[str, Any], ...] | None = None, name: str | None = "op_1"
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "analysisInput": {
            "documents": [
                {"id": str(i + 1), "language": "en", "text": t} for i, t in enumerate(texts)
            ]
        },
        "tasks": list(
            tasks
            or (
                {
                    "kind": "KeyPhraseExtraction",
                    "taskName": "phrases",
                    "parameters": {"modelVersion": "latest"},
                },
            )
        ),
    }
    if name is not None:
        body["displayName"] = name
    return body


async def submit(c: httpx2.AsyncClient, body: dict[str, Any]) -> str:
    r = await c.post(JOBS, params=V, json=body)
    assert r.status_code == 202, r.text
    assert r.content == b""
    return r.headers["operation-location"]


async def read(c: httpx2.AsyncClient, url: str, **params: Any) -> dict[str, Any]:
    # httpx replaces the URL's own query with `params`, so api-version goes in again.
    r = await c.get(url, params={**V, **params}) if params else await c.get(url)
    assert r.status_code == 200, r.text
    return dict(r.json())


@pytest.fixture
def app() -> Any:
    return create_app(FakeSettings(api_key=KEY))


async def test_auth_and_api_version(app: Any) -> None:
    async with client(app) as c:
        missing = await c.post(JOBS, params=V, json=job("a"))
        bearer = await c.post(
            JOBS, params=V, json=job("a"), headers={"Authorization": f"Bearer {KEY}"}
        )
        no_version = await c.post(JOBS, json=job("a"), headers=AUTH)
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "401"
    assert "Access denied due to invalid subscription key" in missing.json()["error"]["message"]
    assert bearer.status_code == 202
    assert (
        no_version.status_code == 404
        and no_version.json()["error"]["message"] == "Resource not found"
    )


async def test_job_runs_from_not_started_to_succeeded(app: Any) -> None:
    async with client(app, **AUTH) as c:
        url = await submit(
            c, job("Contoso makes wonderful coffee machines.", "Fabrikam sells bikes.")
        )
        assert url.startswith("http://fake.test/language/analyze-text/jobs/") and url.endswith(
            "?api-version=2023-04-01"
        )
        running, done = await read(c, url), await read(c, url)
        numbers = await stats(c, "op_1")
        headers = (await c.get(url)).headers
    assert running["status"] == "running" and running["tasks"]["inProgress"] == 1
    assert running["displayName"] == "op_1" and running["tasks"]["items"] == []
    assert done["status"] == "succeeded" and done["errors"] == []
    assert done["tasks"] | {"items": None} == {
        "completed": 1,
        "failed": 0,
        "inProgress": 0,
        "total": 1,
        "items": None,
    }
    item = done["tasks"]["items"][0]
    assert item["kind"] == "KeyPhraseExtractionLROResults" and item["taskName"] == "phrases"
    assert [d["id"] for d in item["results"]["documents"]] == ["1", "2"]
    assert "machines" in item["results"]["documents"][0]["keyPhrases"]
    for key in ("jobId", "createdDateTime", "lastUpdatedDateTime", "expirationDateTime"):
        assert done[key]
    assert len(numbers["jobs_by_reference"]["op_1"]) == 1
    assert headers["apim-request-id"]


async def test_document_errors_and_partially_completed(app: Any) -> None:
    tasks = (
        {"kind": "EntityRecognition", "parameters": {"modelVersion": "latest"}},
        {"kind": "SentimentAnalysis", "parameters": {"modelVersion": "1999-01-01"}},
        {
            "kind": "CustomEntityRecognition",
            "parameters": {"projectName": "fail-proj", "deploymentName": "d"},
        },
    )
    body = job("Contoso is in Seattle.", "", tasks=tasks)
    body["analysisInput"]["documents"].append({"id": "3", "language": "xx", "text": "hmm"})
    async with client(app, **AUTH) as c:
        url = await submit(c, body)
        await c.post("/_fake/advance", json={"steps": 4})
        done = await read(c, url)
    assert done["status"] == "partiallyCompleted"
    assert done["tasks"]["completed"] == 1 and done["tasks"]["failed"] == 2
    first = done["tasks"]["items"][0]
    assert first["status"] == "succeeded"
    assert {e["text"] for e in first["results"]["documents"][0]["entities"]} == {
        "Contoso",
        "Seattle",
    }
    errors = {e["id"]: e["error"]["innererror"]["code"] for e in first["results"]["errors"]}
    assert errors == {"2": "InvalidDocument", "3": "UnsupportedLanguageCode"}
    assert [i["status"] for i in done["tasks"]["items"]] == ["succeeded", "failed", "failed"]
    assert [e["target"] for e in done["errors"]] == ["#/tasks/items/1", "#/tasks/items/2"]
    assert done["errors"][0]["innererror"]["code"] == "ModelVersionIncorrect"
    assert done["errors"][1]["code"] == "ProjectNotFound"


async def test_all_documents_invalid_fails_the_job(app: Any) -> None:
    async with client(app, **AUTH) as c:
        url = await submit(c, job("", " "))
        await read(c, url)
        done = await read(c, url)
    assert done["status"] == "failed" and done["tasks"]["failed"] == 1


async def test_cancel_returns_202_and_monitor(app: Any) -> None:
    tasks = tuple({"kind": "KeyPhraseExtraction"} for _ in range(3))
    async with client(app, **AUTH) as c:
        url = await submit(c, job("Some text here.", tasks=tasks))
        await read(c, url)
        await read(c, url)
        job_id = url.split("/jobs/")[1].split("?")[0]
        cancel = await c.post(f"{JOBS}/{job_id}:cancel", params=V)
        cancelling = (await c.post(f"{JOBS}/{job_id}:cancel", params=V)).status_code
        cancelled = await read(c, url)
        late = await c.post(f"{JOBS}/{job_id}:cancel", params=V)
    assert cancel.status_code == 202 and cancel.headers["operation-location"] == url
    assert cancelling == 202
    assert cancelled["status"] == "cancelled" and cancelled["tasks"]["completed"] == 1
    assert late.status_code == 400 and late.json()["error"]["code"] == "InvalidRequest"


async def test_submit_validation_errors(app: Any) -> None:
    async with client(app, **AUTH) as c:
        empty = await c.post(
            JOBS,
            params=V,
            json={"analysisInput": {"documents": []}, "tasks": [{"kind": "KeyPhraseExtraction"}]},
        )
        dup = job("a", "b")
        dup["analysisInput"]["documents"][1]["id"] = "1"
        dup_r = await c.post(JOBS, params=V, json=dup)
        kind = await c.post(JOBS, params=V, json=job("a", tasks=({"kind": "LanguageDetection"},)))
        missing = await c.get(f"{JOBS}/nope", params=V)
    assert empty.status_code == 400
    assert empty.json()["error"]["innererror"]["code"] == "MissingInputDocuments"
    assert dup_r.json()["error"]["innererror"]["code"] == "InvalidDocumentBatch"
    assert kind.json()["error"]["innererror"]["code"] == "InvalidParameterValue"
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "NotFound"


async def test_top_skip_and_next_link(app: Any) -> None:
    async with client(app, **AUTH) as c:
        url = await submit(c, job("One text.", "Two text.", "Three text."))
        await c.post("/_fake/advance", json={"steps": 2})
        first = await read(c, url, top=2, showStats="true")
        second = await read(c, first["nextLink"])
    docs = first["tasks"]["items"][0]["results"]
    assert [d["id"] for d in docs["documents"]] == ["1", "2"]
    assert docs["statistics"]["documentsCount"] == 2
    assert "skip=2" in first["nextLink"] and "nextLink" not in second
    assert [d["id"] for d in second["tasks"]["items"][0]["results"]["documents"]] == ["3"]


async def test_429_retry_after_and_submit_faults(app: Any) -> None:
    async with client(app, **AUTH) as c:
        await fault(c, op="submit", kind="rate_limit", retry_after=4)
        limited = await c.post(JOBS, params=V, json=job("a", name="op_x"))
        await fault(c, op="submit", kind="error_after", status=503)
        failed = await c.post(JOBS, params=V, json=job("a", name="op_x"))
        numbers = await stats(c, "op_x")
    assert limited.status_code == 429 and limited.headers["retry-after"] == "4"
    assert limited.json()["error"]["code"] == "429"
    assert "Analyze Text Submit Job" in limited.json()["error"]["message"]
    assert failed.status_code == 503 and failed.json()["error"]["code"] == "ServiceUnavailable"
    assert (
        numbers["creates_by_reference"] == {"op_x": 2}
        and len(numbers["jobs_by_reference"]["op_x"]) == 1
    )
