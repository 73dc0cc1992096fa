"""The bundled `google_translate` profile (AIP-151) driven end to end through the agent API.

The Cloud Translation batch fake (jobgate_fakes/providers/google_translate) answers
`batchTranslateText` with a long-running operation; each read moves it on; the
characters of an input file named `fail*` fail, and an operation whose every file fails
is done with an `error` (code 3) and no `response`. Counts are characters.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx2

from tests.conftest import Gateway
from tests.integration.profiles.conftest import (
    KEY,
    STEP,
    fault,
    finish,
    history,
    never_success,
    summary_is,
)
from tests.integration.profiles.lost_create import create, goes_to_a_person
from tests.integration.profiles.rate_limit import honours_retry_hint

NAME = "google_translate"
EXTRA_ENV = {"GOOGLE_CLOUD_PROJECT": "my-project"}


def translate(*files: str, targets: int = 1) -> dict[str, Any]:
    """A BatchTranslateTextRequest for these input files, to a fresh output prefix."""
    return {
        "sourceLanguageCode": "en",
        "targetLanguageCodes": ["de", "fr", "it"][:targets],
        "inputConfigs": [{"gcsSource": {"inputUri": f"gs://in/{f}"}} for f in files],
        "outputConfig": {"gcsDestination": {"outputUriPrefix": f"gs://out/{uuid.uuid4()}/"}},
    }


async def start(gateway: Gateway, *files: str, targets: int = 1) -> str:
    body = translate(*files, targets=targets)
    r = await gateway.http.post(
        "/v1/operations",
        json={"provider": NAME, "kind": "batch_translate_text", "input": body},
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


async def test_done_with_response_is_succeeded_with_the_response(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, "a.txt", "b.txt", targets=2)
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    summary_is(done, processed=4000, succeeded=4000, failed=0, not_processed=0)
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert result["result"]["translatedCharacters"] == "4000"
    assert KEY not in str(await history(gateway, op_id))


async def test_some_failed_characters_are_completed_with_errors(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = await start(gateway, "a.txt", "fail.txt")
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "completed_with_errors"), done
    never_success(done)
    summary_is(done, processed=2000, succeeded=1000, failed=1000, not_processed=0)


async def test_done_with_error_is_failed_at_once_with_googles_error(
    gateway: Gateway, fake: httpx2.AsyncClient
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


async def test_cancel_ends_cancelled(gateway: Gateway, fake: httpx2.AsyncClient) -> None:
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


async def test_a_lost_create_answer_is_never_resent_and_goes_to_a_person(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    # The operation is started, then the answer is cut off halfway: no name reached jobgate.
    await fault(fake, op="create", kind="drop")
    made = await create(gateway, NAME, "batch_translate_text", translate("a.txt"))
    done = await goes_to_a_person(gateway, made)
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == 1 and len(stats["jobs"]) == 1  # one create, one operation
    assert stats["list_calls"] == 0
    # The list call a person makes names this deployment's project, not PROJECT/LOCATION.
    call = done["error"]["details"]["list_call"]
    assert "/v3/projects/my-project/locations/us-central1/operations" in call, call
    assert call in done["error"]["message"]


async def test_rate_limited_read_waits_for_retry_info_without_a_retry_after_header(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    """Google's 429 carries no Retry-After: the hint is `RetryInfo.retryDelay` ("1000s")
    in the error details, which the profile's `retry_hint` reads."""
    op_id = await start(gateway, "a.txt", "b.txt")
    # 1000 s: above the profile's 300 s backoff cap, inside its 1800 s bound.
    limited = await honours_retry_hint(gateway, fake, op_id, op="get", hint=1000, step=STEP)
    assert "retry-after" not in {k.lower() for k in limited["response_headers"]}
    assert "google.rpc.RetryInfo" in limited["response_body"]
    assert "1000s" in limited["response_body"], limited
    done = await finish(gateway, op_id)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
