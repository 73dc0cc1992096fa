"""The bundled `google_lro` profile (AIP-151) driven end to end through the agent API.

The Cloud Translation batch fake (app/provider_fakes/google_lro) answers
`batchTranslateText` with a long-running operation; each read moves it on; the
characters of an input file named `fail*` fail, and an operation whose every file fails
is done with an `error` (code 3) and no `response`. Counts are characters.
"""

from __future__ import annotations

import uuid

import httpx

from tests.conftest import Gateway
from tests.integration.profiles.conftest import KEY, STEP, finish, history, never_success

NAME = "google_lro"
EXTRA_ENV = {"GOOGLE_CLOUD_PROJECT": "my-project"}


async def start(gateway: Gateway, *files: str, targets: int = 1) -> str:
    body = {
        "sourceLanguageCode": "en",
        "targetLanguageCodes": ["de", "fr", "it"][:targets],
        "inputConfigs": [{"gcsSource": {"inputUri": f"gs://in/{f}"}} for f in files],
        "outputConfig": {"gcsDestination": {"outputUriPrefix": f"gs://out/{uuid.uuid4()}/"}},
    }
    r = await gateway.http.post(
        "/v1/operations",
        json={"provider": NAME, "kind": "batch_translate_text", "input": body},
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


async def test_done_with_response_is_succeeded_with_the_response(
    gateway: Gateway, fake: httpx.AsyncClient
) -> None:
    op_id = await start(gateway, "a.txt", "b.txt", targets=2)
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    assert done["result_summary"] == {
        "processed": 4000,
        "succeeded": 4000,
        "failed": 0,
        "not_processed": 0,
    }
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert result["result"]["translatedCharacters"] == "4000"
    assert KEY not in str(await history(gateway, op_id))


async def test_some_failed_characters_are_completed_with_errors(
    gateway: Gateway, fake: httpx.AsyncClient
) -> None:
    op_id = await start(gateway, "a.txt", "fail.txt")
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "completed_with_errors"), done
    never_success(done)
    assert done["result_summary"] == {
        "processed": 2000,
        "succeeded": 1000,
        "failed": 1000,
        "not_processed": 0,
    }


async def test_done_with_error_is_failed_at_once_with_googles_error(
    gateway: Gateway, fake: httpx.AsyncClient
) -> None:
    # Failed characters are counted but there is no response to collect: no collection
    # step that would retry a missing result until the deadline.
    op_id = await start(gateway, "fail-1.txt")
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    never_success(done)
    assert done["error"]["code"] == "3"
    states = [e["to_state"] for e in await history(gateway, op_id) if e["kind"] == "transition"]
    assert states[-1] == "failed" and "result_collecting" not in states


async def test_cancel_ends_cancelled(gateway: Gateway, fake: httpx.AsyncClient) -> None:
    op_id = await start(gateway, "a.txt", "b.txt", targets=3)
    await gateway.tick(STEP)
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("cancelled", "cancelled"), done
    never_success(done)
    stats = (await fake.get("/_fake/stats")).json()
    [calls] = stats["jobs"].values()
    assert calls["cancel_calls"] == 1
