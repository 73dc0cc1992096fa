"""The bundled `azure_operation_location` profile driven end to end through the agent API.

The Azure AI Language jobs fake (app/provider_fakes/azure_language) answers a submit with
an empty 202 whose `Operation-Location` header names the job; each status read moves the
job on; a task whose `modelVersion` is `bogus` fails with `ModelVersionIncorrect`.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.conftest import Gateway
from tests.integration.profiles.conftest import KEY, errors_of, finish, history, never_success

NAME = "azure_operation_location"


def task(kind: str = "KeyPhraseExtraction", model: str = "latest") -> dict[str, Any]:
    return {"kind": kind, "taskName": kind.lower(), "parameters": {"modelVersion": model}}


async def start(gateway: Gateway, *tasks: dict[str, Any]) -> dict[str, Any]:
    body = {
        "analysisInput": {"documents": [{"id": "1", "language": "en", "text": "Jobs polled."}]},
        "tasks": list(tasks),
    }
    r = await gateway.http.post(
        "/v1/operations",
        json={"provider": NAME, "kind": "analyze_text", "input": body},
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert r.status_code == 202, r.text
    return dict(r.json())


async def test_success_is_collected_from_the_status_answer(
    gateway: Gateway, fake: httpx.AsyncClient
) -> None:
    op_id = (await start(gateway, task(), task("SentimentAnalysis")))["operation_id"]
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert len(result["result"]) == 2
    assert KEY not in str(await history(gateway, op_id))


async def test_one_failed_task_is_listed_with_azures_error(
    gateway: Gateway, fake: httpx.AsyncClient
) -> None:
    op_id = (await start(gateway, task(), task("SentimentAnalysis", "bogus")))["operation_id"]
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "completed_with_errors"), done
    never_success(done)
    assert done["result_summary"] == {"processed": 2, "succeeded": 1, "failed": 1}
    [failed] = await errors_of(gateway, op_id)
    assert failed["innererror"]["code"] == "ModelVersionIncorrect"
    assert failed["target"] == "#/tasks/items/1"


async def test_every_task_failed_is_failed(gateway: Gateway, fake: httpx.AsyncClient) -> None:
    op_id = (await start(gateway, task(model="bogus")))["operation_id"]
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    never_success(done)
    assert done["error"]["code"] == "all_items_failed"
    assert done["result_summary"] == {"processed": 1, "succeeded": 0, "failed": 1}
    [failed] = await errors_of(gateway, op_id)
    assert failed["innererror"]["code"] == "ModelVersionIncorrect"


async def test_cancel_ends_cancelled(gateway: Gateway, fake: httpx.AsyncClient) -> None:
    op_id = (await start(gateway, task(), task("SentimentAnalysis")))["operation_id"]
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("cancelled", "cancelled"), done
    never_success(done)
    stats = (await fake.get("/_fake/stats")).json()
    [calls] = stats["jobs"].values()
    assert calls["cancel_calls"] == 1
