"""The Document AI `batchProcess` fake, over HTTP: operations, per-document failures, faults."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from jobgate_fakes.providers.google_document_ai import create_app
from jobgate_fakes.providers.settings import FakeSettings
from tests.provider_fakes.conftest import client, fault, stats
from tests.support.servers import serve_app

TOKEN = "ya29.fake-access-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PARENT = "/v1/projects/my-project/locations/us"
PROCESS = f"{PARENT}/processors/a1b2c3d4e5f60718:batchProcess"
META = "type.googleapis.com/google.cloud.documentai.v1.BatchProcessMetadata"
RESPONSE = "type.googleapis.com/google.cloud.documentai.v1.BatchProcessResponse"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def request(
    *docs: tuple[str, str], out: str = "gs://out-bucket/results/", **labels: str
) -> dict[str, Any]:
    return {
        "inputDocuments": {
            "gcsDocuments": {"documents": [{"gcsUri": u, "mimeType": t} for u, t in docs]}
        },
        "documentOutputConfig": {"gcsOutputConfig": {"gcsUri": out}},
        "skipHumanReview": True,
        "labels": labels,
    }


async def start(c: httpx2.AsyncClient, body: dict[str, Any], url: str = PROCESS) -> dict[str, Any]:
    r = await c.post(url, json=body)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def read(c: httpx2.AsyncClient, name: str) -> dict[str, Any]:
    r = await c.get(f"/v1/{name}")
    assert r.status_code == 200, r.text
    return dict(r.json())


@pytest.fixture
def app() -> Any:
    return create_app(FakeSettings(api_key=TOKEN))


async def test_partial_success_is_succeeded_with_per_document_statuses(app: Any) -> None:
    async with client(app, **AUTH) as c:
        op = await start(
            c,
            request(
                ("gs://in-bucket/a.pdf", PDF),
                ("gs://in-bucket/b.docx", DOCX),
                ("gs://in-bucket/scans/fail-c.pdf", PDF),
                jobgate_ref="op_1",
            ),
        )
        seen = [await read(c, op["name"]) for _ in range(4)]
        numbers = await stats(c, "jobgate_ref=op_1")
    name, op_id = op["name"], op["name"].rsplit("/", 1)[-1]
    assert name.startswith("projects/") and "/locations/us/operations/" in name
    assert "my-project" not in name and op_id.isdigit()  # project number, numeric id
    assert set(op) == {"name", "metadata"}  # no `done` while false, no result
    assert op["metadata"]["@type"] == META and op["metadata"]["state"] == "WAITING"
    assert op["metadata"]["createTime"].endswith("Z") and op["metadata"]["updateTime"]
    assert [s["metadata"]["state"] for s in seen] == ["RUNNING"] * 3 + ["SUCCEEDED"]
    assert all(
        "done" not in s and "individualProcessStatuses" not in s["metadata"] for s in seen[:3]
    )
    done = seen[-1]
    assert done["done"] is True and "error" not in done
    assert done["response"] == {"@type": RESPONSE}
    assert "stateMessage" not in done["metadata"]
    assert done["metadata"]["individualProcessStatuses"] == [
        {
            "inputGcsSource": "gs://in-bucket/a.pdf",
            "status": {},
            "outputGcsDestination": f"gs://out-bucket/results/{op_id}/0",
            "humanReviewStatus": {"state": "SKIPPED"},
        },
        {
            "inputGcsSource": "gs://in-bucket/b.docx",
            "status": {"code": 3, "message": "Unsupported input file format."},
        },
        {
            "inputGcsSource": "gs://in-bucket/scans/fail-c.pdf",
            "status": {"code": 13, "message": "Internal error encountered."},
        },
    ]
    assert numbers["jobs_by_reference"] == {"jobgate_ref=op_1": [name]}
    assert numbers["jobs"][name]["get_calls"] == 4


async def test_every_document_failed_is_failed_with_error(app: Any) -> None:
    async with client(app, **AUTH) as c:
        op = await start(
            c, request(("gs://in-bucket/fail-1.pdf", PDF), ("gs://in-bucket/x.txt", "text/plain"))
        )
        await c.post("/_fake/advance", json={"job_id": op["name"], "steps": 2})
        done = await read(c, op["name"])
    assert done["done"] is True and "response" not in done
    assert done["error"] == {"code": 3, "message": "Failed to process all documents."}
    assert done["metadata"]["state"] == "FAILED"
    assert done["metadata"]["stateMessage"] == "Failed to process all documents."
    assert [s["status"]["code"] for s in done["metadata"]["individualProcessStatuses"]] == [13, 3]


async def test_cancel_keeps_processed_documents_and_ends_with_code_1(app: Any) -> None:
    async with client(app, **AUTH) as c:
        op = await start(
            c, request(*[(f"gs://in-bucket/{n}.pdf", PDF) for n in "abc"], jobgate_ref="c")
        )
        await read(c, op["name"])  # RUNNING
        await read(c, op["name"])  # a.pdf processed
        cancel = await c.post(f"/v1/{op['name']}:cancel", json={})
        listed = (await c.get(f"{PARENT}/operations")).json()["operations"][0]
        cancelled = await read(c, op["name"])
        again = await c.post(f"/v1/{op['name']}:cancel", json={})
        later = await read(c, op["name"])
        numbers = await stats(c, "jobgate_ref=c")
    assert cancel.status_code == 200 and cancel.json() == {}
    assert listed["metadata"]["state"] == "CANCELLING" and "done" not in listed
    assert cancelled["done"] is True and cancelled["metadata"]["state"] == "CANCELLED"
    assert cancelled["error"] == {"code": 1, "message": "Operation was cancelled."}
    statuses = cancelled["metadata"]["individualProcessStatuses"]
    assert statuses[0]["status"] == {} and "outputGcsDestination" in statuses[0]
    assert [s["status"].get("code") for s in statuses[1:]] == [1, 1]
    assert all("outputGcsDestination" not in s for s in statuses[1:])
    assert again.status_code == 200 and again.json() == {} and later == cancelled
    assert numbers["jobs"][op["name"]]["cancel_calls"] == 2


async def test_a_second_create_is_a_second_operation(app: Any) -> None:
    body = request(("gs://in-bucket/a.pdf", PDF), jobgate_ref="twice")
    async with client(app, **AUTH) as c:
        first, second = await start(c, body), await start(c, body)
        numbers = await stats(c, "jobgate_ref=twice")
    assert first["name"] != second["name"]
    assert numbers["creates_by_reference"] == {"jobgate_ref=twice": 2}
    assert numbers["jobs_by_reference"] == {"jobgate_ref=twice": [first["name"], second["name"]]}


async def test_version_binding_prefix_input_snake_case_and_documents_per_read() -> None:
    app = create_app(FakeSettings(api_key=TOKEN, documents_per_read=2))
    body = {
        "input_documents": {"gcs_prefix": {"gcs_uri_prefix": "gs://in-bucket/batch/"}},
        "document_output_config": {"gcs_output_config": {"gcs_uri": "gs://out-bucket/r"}},
    }
    failing = {**body, "input_documents": {"gcsPrefix": {"gcsUriPrefix": "gs://in-bucket/fail-"}}}
    version = (
        f"{PARENT}/processors/abc/processorVersions/pretrained-ocr-v2.0-2023-06-02:batchProcess"
    )
    async with client(app, **AUTH) as c:
        op = await start(c, body, version)
        seen = [await read(c, op["name"]) for _ in range(3)]
        bad = await start(c, failing, version)
        await c.post("/_fake/advance", json={"steps": 3})
        failed = await c.get(f"/v1/projects/my-project/operations/{bad['name'].rsplit('/', 1)[-1]}")
    assert [s.get("done", False) for s in seen] == [False, False, True]  # 3 documents, 2 a read
    statuses = seen[-1]["metadata"]["individualProcessStatuses"]
    assert [s["inputGcsSource"] for s in statuses] == [
        f"gs://in-bucket/batch/{i}.pdf" for i in range(3)
    ]
    assert statuses[2]["outputGcsDestination"].startswith("gs://out-bucket/r/")
    assert failed.status_code == 200 and failed.json()["metadata"]["state"] == "FAILED"


async def test_unauthenticated_body_is_google_rpc_status(app: Any) -> None:
    body = request(("gs://in-bucket/a.pdf", PDF))
    async with client(app) as c:
        missing = await c.post(PROCESS, json=body)
        wrong = await c.get(f"{PARENT}/operations", headers={"Authorization": "Bearer other"})
        basic = await c.post(PROCESS, json=body, headers={"Authorization": f"Basic {TOKEN}"})
        numbers = await stats(c)
    error = missing.json()["error"]
    assert missing.status_code == 401 and error["code"] == 401
    assert error["status"] == "UNAUTHENTICATED"
    assert error["details"][0]["reason"] == "CREDENTIALS_MISSING"
    assert error["details"][0]["metadata"]["service"] == "documentai.googleapis.com"
    assert wrong.status_code == 401 and wrong.json()["error"]["status"] == "UNAUTHENTICATED"
    assert basic.status_code == 401
    assert numbers["create_calls"] == 0 and numbers["jobs"] == {}


GOOD = request(("gs://in-bucket/a.pdf", PDF))
INPUT = GOOD["inputDocuments"]


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({**GOOD, "inputDocument": INPUT}, None, 'Unknown name "inputDocument"'),
        (
            {**GOOD, "inputDocuments": {**INPUT, "gcsPrefix": {"gcsUriPrefix": "gs://b/x/"}}},
            "input_documents",
            "Oneof field 'source' is already set",
        ),
        ({**GOOD, "skipHumanReview": "yes"}, "skip_human_review", "(TYPE_BOOL)"),
        (
            {**GOOD, "inputDocuments": "gs://b/a.pdf"},
            "input_documents",
            "BatchDocumentsInputConfig",
        ),
        ({**GOOD, "labels": {"ref": 7}}, "labels", "Invalid value"),
        (
            {k: v for k, v in GOOD.items() if k != "inputDocuments"},
            "inputDocuments",
            "gcsDocuments",
        ),
        (request(), "inputDocuments.gcsDocuments.documents", "At least one"),
        (
            request(*[("gs://in-bucket/a.pdf", PDF)] * 5001),
            "inputDocuments.gcsDocuments.documents",
            "at most 5000",
        ),
        (
            request(("in-bucket/a.pdf", PDF)),
            "inputDocuments.gcsDocuments.documents[0].gcsUri",
            "gs://",
        ),
        (
            request(("gs://in-bucket/a.pdf", "")),
            "inputDocuments.gcsDocuments.documents[0].mimeType",
            "required",
        ),
        (
            request(("gs://in-bucket/a.pdf", PDF), out="s3://x/"),
            "documentOutputConfig.gcsOutputConfig.gcsUri",
            "gs://",
        ),
        (request(("gs://in-bucket/a.pdf", PDF), Ref="x"), "labels", "label key 'Ref'"),
        (request(("gs://in-bucket/a.pdf", PDF), ref="X"), "labels['ref']", "value for label"),
        (
            request(("gs://in-bucket/a.pdf", PDF), **{"9ref": "x"}),
            "labels",
            "starting with a letter",
        ),
    ],
)
async def test_invalid_requests_are_400_with_the_field_and_make_nothing(
    app: Any, body: dict[str, Any], field: str | None, says: str
) -> None:
    async with client(app, **AUTH) as c:
        r = await c.post(PROCESS, json=body)
        numbers = await stats(c)
    error = r.json()["error"]
    assert r.status_code == 400 and error["status"] == "INVALID_ARGUMENT", r.text
    assert says in error["message"]
    violation = error["details"][0]["fieldViolations"][0]
    assert error["details"][0]["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    assert violation.get("field") == field and violation["description"] == error["message"]
    assert numbers["create_calls"] == 1 and numbers["jobs"] == {}


async def test_not_json_unknown_processor_and_operation(app: Any) -> None:
    async with client(app, **AUTH) as c:
        not_json = await c.post(PROCESS, content=b"{", headers={"content-type": "application/json"})
        a_list = await c.post(PROCESS, json=[GOOD])
        no_processor = await c.post(f"{PARENT}/processors/missing-1:batchProcess", json=GOOD)
        no_version = await c.post(
            f"{PARENT}/processors/abc/processorVersions/missing-v:batchProcess", json=GOOD
        )
        no_op = await c.get(f"{PARENT}/operations/123")
        no_cancel = await c.post(f"{PARENT}/operations/123:cancel", json={})
        intl = await c.post(PROCESS, json=request(("gs://in-bucket/a.pdf", PDF), été="ünï-1"))
    assert not_json.status_code == 400 and a_list.status_code == 400
    for r in (no_processor, no_version, no_op, no_cancel):
        assert r.status_code == 404 and r.json()["error"]["status"] == "NOT_FOUND", r.text
    assert "missing-1" in no_processor.json()["error"]["message"]
    assert intl.status_code == 200, intl.text  # international lowercase letters are allowed


async def test_429_has_retry_info_and_refused_calls_do_nothing(app: Any) -> None:
    async with client(app, **AUTH) as c:
        await fault(c, op="create", kind="rate_limit", retry_after=7)
        limited = await c.post(PROCESS, json=request(("gs://in-bucket/a.pdf", PDF), ref="r"))
        op = await start(
            c, request(("gs://in-bucket/a.pdf", PDF), ("gs://in-bucket/b.pdf", PDF), ref="r")
        )
        await fault(c, op="get", kind="rate_limit", retry_after=3, retry_after_header=True)
        read_limited = await c.get(f"/v1/{op['name']}")
        await fault(c, op="get", kind="error_before", status=503)
        unavailable = await c.get(f"/v1/{op['name']}")
        after = await read(c, op["name"])
        numbers = await stats(c, "ref=r")
    error = limited.json()["error"]
    assert limited.status_code == 429 and error["status"] == "RESOURCE_EXHAUSTED"
    assert "retry-after" not in limited.headers
    assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"} in error[
        "details"
    ]
    info = next(d for d in error["details"] if d["@type"].endswith("ErrorInfo"))
    assert info["reason"] == "RATE_LIMIT_EXCEEDED"
    assert info["metadata"]["service"] == "documentai.googleapis.com"
    assert read_limited.status_code == 429 and read_limited.headers["retry-after"] == "3"
    assert unavailable.status_code == 503 and unavailable.json()["error"]["status"] == "UNAVAILABLE"
    assert after["metadata"]["state"] == "RUNNING"  # the refused reads moved nothing
    assert numbers["creates_by_reference"] == {"ref=r": 2}
    assert numbers["jobs_by_reference"] == {"ref=r": [op["name"]]}
    assert numbers["jobs"][op["name"]]["get_calls"] == 3


async def test_error_after_create_still_makes_the_operation(app: Any) -> None:
    async with client(app, **AUTH) as c:
        await fault(c, op="create", kind="error_after")
        failed = await c.post(PROCESS, json=request(("gs://in-bucket/a.pdf", PDF), ref="e"))
        await fault(c, op="cancel", kind="error_after", status=502)
        numbers = await stats(c, "ref=e")
        name = numbers["jobs_by_reference"]["ref=e"][0]
        cancel = await c.post(f"/v1/{name}:cancel", json={})
        listed = (await c.get(f"{PARENT}/operations")).json()["operations"]
    assert failed.status_code == 500 and failed.json()["error"]["status"] == "INTERNAL"
    assert cancel.status_code == 502
    assert [o["name"] for o in listed] == [name] and listed[0]["metadata"]["state"] == "CANCELLING"


def test_lost_and_slow_answers_still_do_the_work() -> None:
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
                c.post(PROCESS, json=request(("gs://in-bucket/a.pdf", PDF), ref="lost"))
            listed = c.get(f"{PARENT}/operations").json()["operations"]
            with pytest.raises(httpx2.ReadTimeout):
                c.get(f"/v1/{listed[0]['name']}", timeout=0.1)
            after = c.get(f"/v1/{listed[0]['name']}").json()
            numbers = c.get("/_fake/stats", params={"reference": "ref=lost"}).json()
    assert len(listed) == 1 and listed[0]["metadata"]["state"] == "WAITING"
    assert numbers["jobs_by_reference"] == {"ref=lost": [listed[0]["name"]]}
    assert after["done"] is True  # the timed-out read started it; this one processed a.pdf


async def test_list_filters_pages_and_stays_in_its_location(app: Any) -> None:
    async with client(app, **AUTH) as c:
        names = [
            (await start(c, request((f"gs://in-bucket/{i}.pdf", PDF))))["name"] for i in range(3)
        ]
        await c.post("/_fake/advance", json={"job_id": names[0], "steps": 2})  # done
        page1 = (await c.get(f"{PARENT}/operations", params={"pageSize": 2})).json()
        page2 = (
            await c.get(
                f"{PARENT}/operations", params={"pageSize": 2, "pageToken": page1["nextPageToken"]}
            )
        ).json()
        waiting = (
            await c.get(
                f"{PARENT}/operations",
                params={"filter": "TYPE=BATCH_PROCESS_DOCUMENTS AND STATE=WAITING"},
            )
        ).json()
        done = (await c.get(f"{PARENT}/operations", params={"filter": "STATE=DONE"})).json()
        other_type = (await c.get(f"{PARENT}/operations", params={"filter": "TYPE=OTHER"})).json()
        bad = await c.get(f"{PARENT}/operations", params={"filter": "done=true"})
        elsewhere = (await c.get("/v1/projects/my-project/locations/eu/operations")).json()
        numbers = await stats(c)
    assert [o["name"] for o in page1["operations"]] == names[::-1][:2]
    assert [o["name"] for o in page2["operations"]] == [names[0]] and "nextPageToken" not in page2
    assert [o["name"] for o in waiting["operations"]] == names[::-1][:2]
    assert [o["name"] for o in done["operations"]] == [names[0]]
    assert other_type == {} and elsewhere == {}
    assert bad.status_code == 400 and bad.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert numbers["list_calls"] == 7
