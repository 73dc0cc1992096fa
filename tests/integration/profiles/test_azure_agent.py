"""The bundled `azure_operation_location` profile driven end to end through the agent API.

The Azure AI Language jobs fake (jobgate_fakes/providers/azure_language) answers a submit with
an empty 202 whose `Operation-Location` header names the job; each status read moves the
job on; a task whose `modelVersion` is `bogus` fails with `ModelVersionIncorrect`.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import Gateway
from tests.integration.profiles.conftest import (
    KEY,
    STEP,
    errors_of,
    fault,
    finish,
    history,
    never_success,
    summary_is,
)
from tests.integration.profiles.lost_create import create, goes_to_a_person
from tests.integration.profiles.rate_limit import honours_retry_hint

NAME = "azure_operation_location"
PROFILE = Path(__file__).resolve().parents[3] / "app/providers/profiles" / f"{NAME}.yaml"


@pytest.fixture
def gateway_settings(fake: httpx2.AsyncClient, tmp_path: Path) -> dict[str, Any]:
    """Beside the bundled profile, `azure_followed`: the same, with a status path template
    that leads nowhere, so only the Operation-Location the provider named reaches the job."""
    text = PROFILE.read_text().replace(f"name: {NAME}\n", "name: azure_followed\n")
    for path in (
        "/language/analyze-text/jobs/{job_id}\n",
        "/language/analyze-text/jobs/{job_id}:cancel\n",
    ):
        assert text.count(f"path: {path}") == 1
        text = text.replace(f"path: {path}", f"path: /nowhere{path}")
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "azure_followed.yaml").write_text(text)
    return {"profiles_dir": tmp_path / "profiles"}


def task(kind: str = "KeyPhraseExtraction", model: str = "latest") -> dict[str, Any]:
    return {"kind": kind, "taskName": kind.lower(), "parameters": {"modelVersion": model}}


def analysis(*tasks: dict[str, Any]) -> dict[str, Any]:
    """An analyze-text job body: one English document, these tasks."""
    return {
        "analysisInput": {"documents": [{"id": "1", "language": "en", "text": "Jobs polled."}]},
        "tasks": list(tasks),
    }


async def start(gateway: Gateway, *tasks: dict[str, Any], provider: str = NAME) -> dict[str, Any]:
    body = analysis(*tasks)
    r = await gateway.http.post(
        "/v1/operations",
        json={"provider": provider, "kind": "analyze_text", "input": body},
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert r.status_code == 202, r.text
    return dict(r.json())


async def test_success_is_collected_from_the_status_answer(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = (await start(gateway, task(), task("SentimentAnalysis")))["operation_id"]
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert len(result["result"]) == 2
    rows = await history(gateway, op_id)
    assert KEY not in str(rows)
    exchanges = [e["data"] for e in rows if e["kind"] == "exchange"]
    [create] = [e for e in exchanges if e["operation"] == "create"]
    headers = {k.lower(): v for k, v in create["response_headers"].items()}
    reads = {e["url"] for e in exchanges if e["operation"] == "status"}
    assert reads == {headers["operation-location"]}


async def test_one_failed_task_is_listed_with_azures_error(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = (await start(gateway, task(), task("SentimentAnalysis", "bogus")))["operation_id"]
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "completed_with_errors"), done
    never_success(done)
    summary_is(done, processed=2, succeeded=1, failed=1, not_processed=0)
    [failed] = await errors_of(gateway, op_id)
    assert failed["innererror"]["code"] == "ModelVersionIncorrect"
    assert failed["target"] == "#/tasks/items/1"


async def test_every_task_failed_is_failed(gateway: Gateway, fake: httpx2.AsyncClient) -> None:
    op_id = (await start(gateway, task(model="bogus")))["operation_id"]
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    never_success(done)
    assert done["error"]["code"] == "all_items_failed"
    summary_is(done, processed=1, succeeded=0, failed=1, not_processed=0)
    [failed] = await errors_of(gateway, op_id)
    assert failed["innererror"]["code"] == "ModelVersionIncorrect"


async def test_cancel_ends_cancelled(gateway: Gateway, fake: httpx2.AsyncClient) -> None:
    op_id = (await start(gateway, task(), task("SentimentAnalysis")))["operation_id"]
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("cancelled", "cancelled"), done
    never_success(done)
    stats = (await fake.get("/_fake/stats")).json()
    [calls] = stats["jobs"].values()
    assert calls["cancel_calls"] == 1


async def test_status_reads_go_where_the_provider_said(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    """The create answer's Operation-Location is stored on the row and every status read
    (and the collection) follows it; this profile's own template would answer 404."""
    made = await start(gateway, task(), task("SentimentAnalysis"), provider="azure_followed")
    op_id = made["operation_id"]
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    urls = [e["data"]["url"] for e in await history(gateway, op_id) if e["kind"] == "exchange"]
    assert not [u for u in urls if "/nowhere/" in u]


async def test_a_lost_create_answer_is_never_resent_and_goes_to_a_person(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    # `drop` cannot lose an empty 202 (its headers, and so the job id, arrive whole): the
    # job is submitted, then Azure answers a 500 instead of the 202.
    await fault(fake, op="submit", kind="error_after")
    made = await create(gateway, NAME, "analyze_text", analysis(task()))
    await goes_to_a_person(gateway, made)
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == 1 and len(stats["jobs"]) == 1  # one submit, one job


async def test_rate_limited_status_read_honours_retry_after_and_finishes(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = (await start(gateway, task(), task("SentimentAnalysis")))["operation_id"]
    # 200 s: above the profile's 60 s backoff cap, inside its 600 s bound.
    limited = await honours_retry_hint(gateway, fake, op_id, op="status", hint=200, step=STEP)
    headers = {k.lower(): v for k, v in limited["response_headers"].items()}
    assert headers["retry-after"] == "200"
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
