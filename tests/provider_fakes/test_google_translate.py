"""The Cloud Translation (AIP-151) fake, over HTTP: operations, errors, list, cancel, faults."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from jobgate_fakes.providers.google_translate import create_app
from jobgate_fakes.providers.settings import FakeSettings
from tests.provider_fakes.conftest import client, fault, stats

TOKEN = "ya29.fake-access-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PARENT = "/v3/projects/my-project/locations/us-central1"
META = "type.googleapis.com/google.cloud.translation.v3.BatchTranslateMetadata"


def request(
    *files: str, targets: tuple[str, ...] = ("de",), prefix: str = "gs://out/a/", **labels: str
) -> dict[str, Any]:
    return {
        "sourceLanguageCode": "en",
        "targetLanguageCodes": list(targets),
        "inputConfigs": [
            {"gcsSource": {"inputUri": f"gs://in/{f}"}, "mimeType": "text/plain"} for f in files
        ],
        "outputConfig": {"gcsDestination": {"outputUriPrefix": prefix}},
        "labels": labels,
    }


async def start(c: httpx2.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    r = await c.post(f"{PARENT}:batchTranslateText", json=body)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def read(c: httpx2.AsyncClient, name: str) -> dict[str, Any]:
    r = await c.get(f"/v3/{name}")
    assert r.status_code == 200, r.text
    return dict(r.json())


@pytest.fixture
def app() -> Any:
    return create_app(FakeSettings(api_key=TOKEN))


async def test_unauthenticated_body_is_google_rpc_status(app: Any) -> None:
    async with client(app) as c:
        missing = await c.post(f"{PARENT}:batchTranslateText", json=request("a.txt"))
        wrong = await c.get(f"{PARENT}/operations", headers={"Authorization": "Bearer other"})
    error = missing.json()["error"]
    assert (
        missing.status_code == 401 and error["code"] == 401 and error["status"] == "UNAUTHENTICATED"
    )
    assert error["details"][0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert error["details"][0]["reason"] == "CREDENTIALS_MISSING"
    assert wrong.status_code == 401


async def test_operation_runs_to_done_with_response(app: Any) -> None:
    async with client(app, **AUTH) as c:
        op = await start(c, request("a.txt", "b.txt", targets=("de", "fr"), ref="op_1"))
        assert "done" not in op and "error" not in op and "response" not in op
        assert (
            op["name"].startswith("projects/")
            and "/locations/us-central1/operations/" in op["name"]
        )
        assert op["metadata"]["@type"] == META and op["metadata"]["state"] == "RUNNING"
        assert op["metadata"]["totalCharacters"] == "4000"
        assert "translatedCharacters" not in op["metadata"]  # proto3 JSON leaves zeros out
        seen = [await read(c, op["name"]) for _ in range(4)]
        numbers = await stats(c, "ref=op_1")
    assert [s.get("done", False) for s in seen] == [False, False, False, True]
    assert seen[1]["metadata"]["translatedCharacters"] == "2000"
    done = seen[-1]
    assert done["metadata"]["state"] == "SUCCEEDED" and "error" not in done
    assert done["response"]["@type"].endswith("BatchTranslateResponse")
    assert (
        done["response"]["translatedCharacters"] == "4000"
        and "failedCharacters" not in done["response"]
    )
    assert done["response"]["endTime"].endswith("Z")
    assert numbers["jobs_by_reference"] == {"ref=op_1": [op["name"]]}
    assert numbers["jobs"][op["name"]]["get_calls"] == 4


async def test_partial_and_total_failure(app: Any) -> None:
    async with client(app, **AUTH) as c:
        partial = await start(c, request("ok.txt", "fail-1.txt", prefix="gs://out/p/"))
        failed = await start(c, request("fail-2.txt", targets=("de", "ja"), prefix="gs://out/f/"))
        await c.post("/_fake/advance", json={"steps": 2})
        p, f = await read(c, partial["name"]), await read(c, failed["name"])
    assert p["done"] is True and p["response"]["failedCharacters"] == "1000"
    assert p["response"]["translatedCharacters"] == "1000"
    assert f["done"] is True and "response" not in f
    assert f["error"]["code"] == 3 and f["metadata"]["state"] == "FAILED"
    assert f["metadata"]["failedCharacters"] == "2000"


async def test_cancel_ends_with_code_1(app: Any) -> None:
    async with client(app, **AUTH) as c:
        op = await start(c, request("a.txt", "b.txt", "c.txt"))
        await read(c, op["name"])
        cancel = await c.post(f"/v3/{op['name']}:cancel", json={})
        listed = (await c.get(f"{PARENT}/operations")).json()["operations"][0]
        cancelled = await read(c, op["name"])
        again = await c.post(f"/v3/{op['name']}:cancel", json={})
    assert cancel.status_code == 200 and cancel.json() == {}
    assert listed["metadata"]["state"] == "CANCELLING" and "done" not in listed
    assert cancelled["done"] is True and cancelled["error"]["code"] == 1
    assert cancelled["metadata"]["state"] == "CANCELLED"
    assert cancelled["metadata"]["translatedCharacters"] == "1000"
    assert again.status_code == 200 and again.json() == {}


async def test_request_is_validated_and_prefix_used_once(app: Any) -> None:
    async with client(app, **AUTH) as c:
        first = await start(c, request("a.txt", prefix="gs://out/once/", ref="r"))
        again = await c.post(
            f"{PARENT}:batchTranslateText", json=request("a.txt", prefix="gs://out/once/", ref="r")
        )
        no_slash = await c.post(
            f"{PARENT}:batchTranslateText", json=request("a.txt", prefix="gs://out/x")
        )
        bad_label = await c.post(
            f"{PARENT}:batchTranslateText", json=request("a.txt", prefix="gs://o/l/", Ref="x")
        )
        global_loc = await c.post(
            "/v3/projects/p/locations/global:batchTranslateText",
            json=request("a.txt", prefix="gs://o/g/"),
        )
        missing = await c.get("/v3/projects/my-project/locations/us-central1/operations/nope")
        numbers = await stats(c, "ref=r")
    assert first["metadata"]["state"] == "RUNNING"
    for r in (again, no_slash, bad_label, global_loc):
        assert r.status_code == 400 and r.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert missing.status_code == 404 and missing.json()["error"]["status"] == "NOT_FOUND"
    assert numbers["creates_by_reference"] == {"ref=r": 2}
    assert numbers["jobs_by_reference"] == {"ref=r": [first["name"]]}


async def test_list_filters_and_pages(app: Any) -> None:
    async with client(app, **AUTH) as c:
        names = [
            (await start(c, request("a.txt", prefix=f"gs://out/{i}/")))["name"] for i in range(3)
        ]
        await read(c, names[0])  # done after its only pair
        page1 = (await c.get(f"{PARENT}/operations", params={"pageSize": 2})).json()
        page2 = (
            await c.get(
                f"{PARENT}/operations", params={"pageSize": 2, "pageToken": page1["nextPageToken"]}
            )
        ).json()
        running = (await c.get(f"{PARENT}/operations", params={"filter": "done=false"})).json()
        by_state = (
            await c.get(f"{PARENT}/operations", params={"filter": 'metadata.state="SUCCEEDED"'})
        ).json()
        bad = await c.get(f"{PARENT}/operations", params={"filter": "labels.ref=x"})
        other = (await c.get("/v3/projects/other/locations/us-central1/operations")).json()
    assert [o["name"] for o in page1["operations"]] == names[::-1][:2]
    assert [o["name"] for o in page2["operations"]] == [names[0]] and "nextPageToken" not in page2
    assert [o["name"] for o in running["operations"]] == names[::-1][:2]
    assert [o["name"] for o in by_state["operations"]] == [names[0]]
    assert bad.status_code == 400 and other == {}


async def test_429_has_retry_info_and_no_header_unless_asked(app: Any) -> None:
    async with client(app, **AUTH) as c:
        op = await start(c, request("a.txt", "b.txt"))
        await fault(c, op="get", kind="rate_limit", retry_after=12)
        limited = await c.get(f"/v3/{op['name']}")
        await fault(c, op="get", kind="rate_limit", retry_after=5, retry_after_header=True)
        with_header = await c.get(f"/v3/{op['name']}")
        await fault(c, op="create", kind="error_before")
        unavailable = await c.post(
            f"{PARENT}:batchTranslateText", json=request("a.txt", prefix="gs://o/u/")
        )
        after = await read(c, op["name"])
    error = limited.json()["error"]
    assert limited.status_code == 429 and error["status"] == "RESOURCE_EXHAUSTED"
    assert "retry-after" not in limited.headers
    assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"} in error[
        "details"
    ]
    assert with_header.headers["retry-after"] == "5"
    assert unavailable.status_code == 503 and unavailable.json()["error"]["status"] == "UNAVAILABLE"
    assert after["metadata"]["translatedCharacters"] == "1000"  # refused reads did no work
