"""The bundled mock provider over real HTTP (uvicorn in a thread, httpx2 client)."""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import rfc8785
from fastapi import FastAPI, Request, Response
from standardwebhooks.webhooks import Webhook

from jobgate_fakes.mock.app import create_app
from jobgate_fakes.mock.scenarios import canonical_sha256, decide_create, parse_scenario
from jobgate_fakes.mock.settings import MockSettings
from jobgate_fakes.mock.store import MockStore, NewJob
from tests.support.servers import serve_app
from tests.support.timing import budget


def token() -> str:
    return "tok_" + secrets.token_hex(8)


@pytest.fixture(scope="module")
def mock_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One shared mock for the module; every test uses its own tokens, as in real use."""
    state = tmp_path_factory.mktemp("mock") / "mock.db"
    with serve_app(create_app(MockSettings(state_path=str(state)))) as url:
        yield url


@pytest.fixture
def client(mock_url: str) -> Iterator[httpx2.Client]:
    with httpx2.Client(base_url=mock_url, timeout=5) as c:
        yield c


def create(
    c: httpx2.Client, name: str = "fast", tok: str | None = None, **params: Any
) -> httpx2.Response:
    body = {"kind": "report", "input": {"scenario": {"name": name, **params}}}
    return c.post("/v1/jobs", json=body, headers={"Idempotency-Key": tok or token()})


def stats(c: httpx2.Client, tok: str) -> dict[str, Any]:
    return c.get("/_mock/stats", params={"token": tok}).json()


def states(c: httpx2.Client, job_id: str, n: int) -> list[str]:
    return [c.get(f"/v1/jobs/{job_id}").json()["state"] for _ in range(n)]


def test_fast_job_and_result(client: httpx2.Client) -> None:
    r = create(client, "fast", client_reference="op_1")
    assert r.status_code == 202
    body = r.json()
    assert body["state"] == "queued" and body["created"] is True
    assert body["status_url"] == f"/v1/jobs/{body['job_id']}" and body["job_id"].startswith("job_")
    status = client.get(body["status_url"]).json()
    assert status["state"] == "succeeded" and status["error"] is None
    assert status["progress"] == {"completed": 1, "total": 1} and status["updated_at"]
    result = client.get(f"{body['status_url']}/result").json()
    assert result["sha256"] == canonical_sha256(result["data"])
    assert result["items"] == {"processed": 1, "succeeded": 1, "failed": 0}


def test_same_token_same_job(client: httpx2.Client) -> None:
    tok = token()
    first, second = create(client, tok=tok), create(client, tok=tok)
    assert (first.status_code, second.status_code) == (202, 200)
    assert second.json()["job_id"] == first.json()["job_id"]
    assert second.json()["created"] is False
    s = stats(client, tok)
    assert s["creates_by_token"] == {tok: 2}
    assert s["jobs_by_token"] == {tok: [first.json()["job_id"]]}


def test_sync_answers_inline(client: httpx2.Client) -> None:
    r = create(client, "sync")
    assert r.status_code == 200
    body = r.json()
    assert body["state"] == "succeeded" and body["created"] is True
    assert body["result"]["sha256"] == canonical_sha256(body["result"]["data"])


def test_slow_and_late_failure(client: httpx2.Client) -> None:
    job = create(client, "slow", polls=3).json()["job_id"]
    answers = [client.get(f"/v1/jobs/{job}").json() for _ in range(4)]
    assert [a["state"] for a in answers] == ["running"] * 3 + ["succeeded"]
    done = [a["progress"]["completed"] for a in answers]
    assert done == sorted(done) and done[0] < done[-1]
    job = create(client, "late_failure", polls=2).json()["job_id"]
    assert states(client, job, 2) == ["running", "running"]
    failed = client.get(f"/v1/jobs/{job}").json()
    assert failed["state"] == "failed" and failed["error"]["code"] == "render_failed"
    r = client.get(f"/v1/jobs/{job}/result")
    assert r.status_code == 409 and r.json()["error"]["code"] == "not_finished"


def test_never_finishes_then_cancel(client: httpx2.Client) -> None:
    job = create(client, "never_finishes").json()["job_id"]
    assert states(client, job, 5) == ["running"] * 5
    first = client.post(f"/v1/jobs/{job}/cancel", json={"reason": "user asked"})
    assert first.status_code == 202 and first.json() == {"job_id": job, "state": "cancelling"}
    again = client.post(f"/v1/jobs/{job}/cancel")
    assert again.status_code == 202 and again.json()["state"] == "cancelling"
    assert states(client, job, 2) == ["cancelled", "cancelled"]
    late = client.post(f"/v1/jobs/{job}/cancel")
    assert late.status_code == 409
    assert late.json()["error"]["code"] == "job_finished" and late.json()["state"] == "cancelled"
    tok = client.get("/_mock/stats").json()["jobs"][job]["token"]
    assert stats(client, tok)["jobs"][job]["cancel_calls"] == 3


def test_cancel_finished_job_is_409(client: httpx2.Client) -> None:
    job = create(client).json()["job_id"]
    client.get(f"/v1/jobs/{job}")
    r = client.post(f"/v1/jobs/{job}/cancel")
    assert r.status_code == 409 and r.json()["state"] == "succeeded"


def test_rate_limited(client: httpx2.Client) -> None:
    tok = token()
    job = create(client, "rate_limited", tok=tok, retry_after=3, times=2).json()["job_id"]
    for _ in range(2):
        r = client.get(f"/v1/jobs/{job}")
        assert r.status_code == 429 and r.headers["retry-after"] == "3"
    assert client.get(f"/v1/jobs/{job}").json()["state"] == "succeeded"
    assert stats(client, tok)["jobs"][job]["status_calls"] == 3


def test_lost_create_response_drops_connection(client: httpx2.Client) -> None:
    tok = token()
    with pytest.raises(httpx2.RemoteProtocolError):
        create(client, "lost_create_response", tok=tok)
    retry = create(client, "lost_create_response", tok=tok)
    assert retry.status_code == 200 and retry.json()["created"] is False
    s = stats(client, tok)
    assert s["creates_by_token"] == {tok: 2} and s["jobs_by_token"] == {
        tok: [retry.json()["job_id"]]
    }


def test_accept_then_5xx(client: httpx2.Client) -> None:
    tok = token()
    assert create(client, "accept_then_5xx", tok=tok).status_code == 503
    retry = create(client, "accept_then_5xx", tok=tok)
    assert retry.status_code == 200 and retry.json()["created"] is False
    found = client.get("/v1/jobs", params={"idempotency_key": tok}).json()["jobs"]
    assert [j["job_id"] for j in found] == [retry.json()["job_id"]]


def test_create_timeout_and_reject_create_nothing(client: httpx2.Client) -> None:
    tok = token()
    for _ in range(3):
        assert create(client, "create_timeout", tok=tok).status_code == 503
    assert stats(client, tok) == {
        "creates_by_token": {tok: 3},
        "refused_by_reference": {},
        "jobs_by_token": {},
        "jobs_by_reference": {},
        "jobs": {},
        "webhooks_sent": 0,
    }
    tok = token()
    r = create(client, "reject", tok=tok)
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_input"
    assert client.get("/v1/jobs", params={"idempotency_key": tok}).json() == {"jobs": []}


def test_different_job_id(client: httpx2.Client) -> None:
    tok = token()
    assert create(client, "different_job_id", tok=tok).status_code == 503
    second = create(client, "different_job_id", tok=tok)
    assert second.status_code == 202 and second.json()["created"] is True
    found = client.get("/v1/jobs", params={"idempotency_key": tok}).json()["jobs"]
    assert len(found) == 2 and found[1]["job_id"] == second.json()["job_id"]
    assert found[0]["created_at"] <= found[1]["created_at"]
    third = create(client, "different_job_id", tok=tok)
    assert third.status_code == 200 and third.json()["job_id"] == second.json()["job_id"]


def test_cancel_race(client: httpx2.Client) -> None:
    job = create(client, "cancel_race", polls=2).json()["job_id"]
    assert states(client, job, 1) == ["running"]
    r = client.post(f"/v1/jobs/{job}/cancel")
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "job_finished" and r.json()["state"] == "succeeded"
    assert states(client, job, 1) == ["succeeded"]
    assert client.get(f"/v1/jobs/{job}/result").status_code == 200


def test_cancel_ignored(client: httpx2.Client) -> None:
    job = create(client, "cancel_ignored").json()["job_id"]
    assert states(client, job, 1) == ["running"]
    for _ in range(2):
        assert client.post(f"/v1/jobs/{job}/cancel").status_code == 202
        assert states(client, job, 2) == ["running", "running"]


def test_partial_results(client: httpx2.Client) -> None:
    job = create(client, "partial_results", processed=20, failed=4).json()["job_id"]
    assert states(client, job, 2) == ["running", "succeeded_partial"]
    result = client.get(f"/v1/jobs/{job}/result").json()
    assert result["items"] == {"processed": 20, "succeeded": 16, "failed": 4}
    assert len(result["failed_items"]) == 4 and result["failed_items"][0]["error"]["code"]


def test_corrupt_result(client: httpx2.Client) -> None:
    job = create(client, "corrupt_result").json()["job_id"]
    states(client, job, 1)
    result = client.get(f"/v1/jobs/{job}/result").json()
    assert result["sha256"] != hashlib.sha256(rfc8785.dumps(result["data"])).hexdigest()


def test_result_unavailable(client: httpx2.Client) -> None:
    tok = token()
    job = create(client, "result_unavailable", tok=tok, polls=2).json()["job_id"]
    assert states(client, job, 1) == ["succeeded"]
    codes = [client.get(f"/v1/jobs/{job}/result").status_code for _ in range(3)]
    assert codes == [503, 503, 200]
    assert stats(client, tok)["jobs"][job]["result_calls"] == 3


def test_bad_requests(client: httpx2.Client) -> None:
    r = client.post("/v1/jobs", json={"kind": "report", "input": [1]})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_body"
    r = client.post("/v1/jobs", json={"kind": "video"}, headers={"Idempotency-Key": token()})
    assert r.status_code == 400 and r.json()["error"]["code"] == "unknown_kind"
    r = create(client, "no_such_scenario")
    assert r.status_code == 400 and r.json()["error"]["code"] == "unknown_scenario"
    for path in ("/v1/jobs/job_nope", "/v1/jobs/job_nope/result"):
        assert client.get(path).json()["error"]["code"] == "job_not_found"
    assert client.post("/v1/jobs/job_nope/cancel").status_code == 404
    assert client.get("/v1/jobs", params={"cursor": "nope"}).status_code == 400
    assert client.get("/v1/jobs", params={"after": "job_nope"}).status_code == 400


def test_stats_filter_calls_and_lookup(client: httpx2.Client) -> None:
    tok_a, tok_b = token(), token()
    headers = {"Idempotency-Key": tok_a, "X-Jobgate-Worker": "w1", "X-Trace-Id": "tr_1"}
    body = {"kind": "report", "input": {}, "client_reference": f"op_{tok_a}"}
    r = client.post("/v1/jobs", json=body, headers=headers)
    assert r.headers["x-trace-id"] == "tr_1"
    job_a = r.json()["job_id"]
    job_b = create(client, tok=tok_b).json()["job_id"]
    client.get(f"/v1/jobs/{job_a}", headers={"X-Jobgate-Worker": "w2"})
    client.post(f"/v1/jobs/{job_a}/cancel", headers={"X-Jobgate-Worker": "w2"})
    client.get(f"/v1/jobs/{job_a}/result")
    s = stats(client, tok_a)
    assert list(s["jobs"]) == [job_a] and job_b not in s["jobs"]
    assert s["jobs"][job_a] == {
        "status_calls": 1,
        "cancel_calls": 1,
        "result_calls": 1,
        "state": "succeeded",
        "token": tok_a,
        "client_reference": s["jobs"][job_a]["client_reference"],
    }
    assert s["jobs_by_reference"] == {s["jobs"][job_a]["client_reference"]: [job_a]}
    everything = client.get("/_mock/stats").json()
    assert {job_a, job_b} <= set(everything["jobs"])
    log = client.get("/_mock/calls", params={"job_id": job_a}).json()
    assert [(c["op"], c["worker"]) for c in log] == [
        ("create", "w1"),
        ("status", "w2"),
        ("cancel", "w2"),
        ("result", None),
    ]
    assert log[0]["trace_id"] == "tr_1" and all(c["at"] for c in log)
    by_ref = client.get("/v1/jobs", params={"client_reference": f"op_{tok_a}"}).json()
    assert [j["job_id"] for j in by_ref["jobs"]] == [job_a]
    assert by_ref["jobs"][0]["state"] == "succeeded" and by_ref["jobs"][0]["created_at"]


def test_bearer_token_required(tmp_path: Path) -> None:
    settings = MockSettings(state_path=str(tmp_path / "m.db"), provider_token="s3cret")
    with serve_app(create_app(settings)) as url, httpx2.Client(base_url=url) as c:
        assert create(c).status_code == 401
        c.headers["Authorization"] = "Bearer wrong"
        r = create(c)
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        assert c.get("/v1/jobs/job_x").status_code == 401
        c.headers["Authorization"] = "Bearer s3cret"
        assert create(c).status_code == 202
        del c.headers["Authorization"]
        assert c.get("/_mock/stats").status_code == 200  # only /v1/* is protected


def test_state_survives_restart_and_reset(tmp_path: Path) -> None:
    settings = MockSettings(state_path=str(tmp_path / "m.db"))
    tok = token()
    with serve_app(create_app(settings)) as url, httpx2.Client(base_url=url) as c:
        job = create(c, "slow", tok=tok, polls=3).json()["job_id"]
        assert states(c, job, 2) == ["running", "running"]
    with serve_app(create_app(settings)) as url, httpx2.Client(base_url=url) as c:
        again = create(c, "slow", tok=tok, polls=3)
        assert again.status_code == 200 and again.json()["job_id"] == job
        assert states(c, job, 2) == ["running", "succeeded"]  # the count went on from 2
        assert stats(c, tok)["creates_by_token"] == {tok: 2}
        assert c.post("/_mock/reset").status_code == 200
        assert c.get("/_mock/stats").json()["jobs"] == {}
        assert c.get(f"/v1/jobs/{job}").status_code == 404


class Receiver:
    """A tiny webhook receiver app that records what arrives."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.cond = threading.Condition()
        self.app = FastAPI()

        @self.app.post("/hook")
        async def hook(request: Request) -> Response:
            body = await request.body()
            with self.cond:
                self.received.append((dict(request.headers), body))
                self.cond.notify_all()
            return Response(status_code=204)

    def wait_for(self, n: int) -> list[tuple[dict[str, str], bytes]]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.received) >= n, timeout=2)
            return list(self.received)


def test_webhooks_signed_duplicate_and_stale(tmp_path: Path) -> None:
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    receiver = Receiver()
    with serve_app(receiver.app) as hook_url:
        settings = MockSettings(
            state_path=str(tmp_path / "m.db"), webhook_url=f"{hook_url}/hook", webhook_secret=secret
        )
        with serve_app(create_app(settings)) as url, httpx2.Client(base_url=url) as c:
            tok = token()
            job = create(c, "webhook_duplicate", tok=tok).json()["job_id"]
            assert states(c, job, 3) == ["running", "succeeded", "succeeded"]
            got = receiver.wait_for(4)
            verifier = Webhook(secret)
            payloads = [verifier.verify(body, headers) for headers, body in got]
            assert [p["type"] for p in payloads] == [
                "job.running",
                "job.succeeded",
                "job.succeeded",
                "job.running",
            ]
            assert all(p["data"]["job_id"] == job for p in payloads)
            assert payloads[1]["data"]["progress"] == {"completed": 2, "total": 2}
            ids = [headers["webhook-id"] for headers, _ in got]
            assert ids[1] == ids[2] and len({ids[0], ids[1], ids[3]}) == 3
            deadline = time.monotonic() + budget(2)
            while stats(c, tok)["webhooks_sent"] < 4 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert stats(c, tok)["webhooks_sent"] == 4
            # A forged signature must not verify (the receiver side of the contract).
            headers, body = got[0]
            with pytest.raises(Exception, match="signature"):
                Webhook(secret).verify(body + b" ", headers)


def test_webhook_receiver_down_never_fails_requests(tmp_path: Path) -> None:
    receiver = Receiver()
    with serve_app(receiver.app) as dead_url:
        pass  # the port is now closed
    settings = MockSettings(
        state_path=str(tmp_path / "m.db"),
        webhook_url=f"{dead_url}/hook",
        webhook_secret="whsec_" + base64.b64encode(b"k" * 24).decode(),
    )
    with serve_app(create_app(settings)) as url, httpx2.Client(base_url=url) as c:
        tok = token()
        job = create(c, tok=tok).json()["job_id"]
        assert c.get(f"/v1/jobs/{job}").json()["state"] == "succeeded"
        assert stats(c, tok)["webhooks_sent"] == 0


def test_store_stays_fast_with_many_jobs(tmp_path: Path) -> None:
    store = MockStore(str(tmp_path / "big.db"))
    fast = parse_scenario({})
    new = NewJob("report", fast.to_json(), None, None, "queued", (0, 1))
    for i in range(10_000):
        store.create_call(f"t{i}", lambda n: decide_create(fast, n), new, None)
    started = time.monotonic()
    for i in range(0, 10_000, 100):
        s = store.stats(f"t{i}")
        assert len(s["jobs"]) == 1
        (job_id,) = s["jobs"]
        assert store.lookup(f"t{i}", None)[0]["job_id"] == job_id
        assert store.calls(job_id)[0]["op"] == "create"
    assert time.monotonic() - started < 2  # indexed: 100 rounds are milliseconds, not seconds
    store.close()
