"""A read that keeps failing the same way ends the wait in minutes (docs/operations.md,
"Reads that keep failing"), driven through the REST API against the scripted provider
(tests/support/scripted_provider.py), whose status or output reads a job's script
refuses every time, counted at the provider:

- a status read always answering 400 goes to a person (`stalled`) after
  JOBGATE_READ_FAILURES_TO_PERSON reads, never waiting out the result deadline, and
  `/v1/attention` and the view say since when no good answer came;
- a result read answering 422 after the job completed, which the profile declares as
  the job's own failure (`result.job_failed_statuses`), ends `failed` at the first read
  with the provider's detail; undeclared, it goes to a person after N reads.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import Gateway
from tests.support.scripted_provider import create_app, profile_yaml
from tests.support.scripted_runs import run_script, scripted_profiles
from tests.support.servers import serve_app

FINAL = {"state": "succeeded", "counts": {"total": 1, "succeeded": 1, "failed": 0,
                                          "not_processed": 0}}  # fmt: skip
N = 5  # JOBGATE_READ_FAILURES_TO_PERSON's default


@pytest.fixture(scope="module")
def scripted_url() -> Iterator[str]:
    with serve_app(create_app()) as url:
        yield url


@pytest.fixture
def gateway_settings(
    scripted_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    texts = {
        "scripted": profile_yaml("scripted", itemless=False),
        "scripted_declared": profile_yaml("scripted_declared", itemless=False, job_failed=[422]),
    }
    return scripted_profiles(tmp_path, monkeypatch, scripted_url, texts)


run = run_script


def reads_of(scripted_url: str, job_id: str) -> dict[str, int]:
    return dict(httpx2.get(f"{scripted_url}/jobs/{job_id}/reads").json())


async def test_a_status_read_always_answering_400_reaches_a_person(
    gateway: Gateway, scripted_url: str
) -> None:
    refuse = {"status": {"code": 400, "body": None}}
    done = await run(gateway, "scripted", {"running_reads": 1, "final": FINAL, "refuse": refuse})
    assert (done["state"], done["status"]) == ("stalled", "needs_attention"), done
    assert reads_of(scripted_url, done["remote_job_id"])["status"] == 1 + N
    error = done["error"]
    assert error["message"].startswith(
        "The provider keeps answering 400 to the status read: the profile may be wrong"
    ), error
    assert error["details"]["reads"] == N and error["details"]["refusal"] == "status HTTP 400"
    since = error["details"]["failing_since"]
    assert done["deadlines"]["result_at"] > done["updated_at"]  # long before the deadline

    inbox = (await gateway.http.get("/v1/attention")).json()["items"]
    [item] = [i for i in inbox if i["operation"]["operation_id"] == done["operation_id"]]
    assert f"no good answer from the provider since {since}" in item["why"], item["why"]
    assert f"{N} reads in a row: status HTTP 400" in item["why"]
    page = (await gateway.http.get(f"/operations/{done['operation_id']}")).text
    assert "Last good answer" in page and f"{N} reads in a row answered status HTTP 400" in page

    rows = (await gateway.http.get(f"/v1/operations/{done['operation_id']}/history")).json()
    [stop] = [i for i in rows["items"] if i["kind"] == "transition" and i["to_state"] == "stalled"]
    assert stop["data"]["evidence"] == "reads_failing", stop


async def test_a_5xx_every_time_is_waited_out_and_shown(
    gateway: Gateway, scripted_url: str
) -> None:
    """Timeouts, 5xx and 429 are not counted: a 503 every time waits as before, and the
    view says since when no good answer came."""
    refuse = {"status": {"code": 503, "body": None}}
    body = {"provider": "scripted", "kind": "run",
            "input": {"running_reads": 1, "final": FINAL, "refuse": refuse}}  # fmt: skip
    r = await gateway.http.post(
        "/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
    )
    op_id = r.json()["operation_id"]
    for _ in range(3 * N):
        await gateway.tick(60.0)
    op = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert op["done"] is False and op["state"] == "observing", op
    assert reads_of(scripted_url, op["remote_job_id"])["status"] > 1 + N
    page = (await gateway.http.get(f"/operations/{op_id}")).text  # since when, all the same
    assert "Last good answer" in page and "last status HTTP 503" in page


async def test_a_result_422_declared_as_the_jobs_failure_ends_failed_at_once(
    gateway: Gateway, scripted_url: str
) -> None:
    said = {"detail": [{"msg": "the image is larger than the model allows"}]}
    refuse = {"output": {"code": 422, "body": said}}
    script = {"running_reads": 1, "final": FINAL, "refuse": refuse}
    done = await run(gateway, "scripted_declared", script)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    assert reads_of(scripted_url, done["remote_job_id"])["output"] == 1
    assert "HTTP 422" in done["error"]["message"]
    assert "the image is larger than the model allows" in done["error"]["message"]
    assert "may report success" not in done["message"].lower()


async def test_an_undeclared_result_422_reaches_a_person_within_n_reads(
    gateway: Gateway, scripted_url: str
) -> None:
    refuse = {"output": {"code": 422, "body": {"detail": "nope"}}}
    done = await run(gateway, "scripted", {"running_reads": 1, "final": FINAL, "refuse": refuse})
    assert (done["state"], done["status"]) == ("result_unavailable", "needs_attention"), done
    assert reads_of(scripted_url, done["remote_job_id"])["output"] == N
    assert (
        "keeps answering 422 to the result read: the profile may be wrong"
        in (done["error"]["message"])
    )
