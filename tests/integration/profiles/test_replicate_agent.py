"""The bundled `replicate_predictions` profile driven end to end through the agent API.

The Replicate predictions fake (jobgate_fakes/providers/replicate_predictions) runs the echo
model: the output is the prompt's words; `run_seconds` is how long it stays
`processing` (one status read per second), `fail: true` makes the model raise at the
end. `Prefer: wait=5` brings a quick prediction back finished in the create answer.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx2

from jobgate_fakes.providers.replicate_predictions.model import VERSION
from tests.conftest import Gateway
from tests.integration.profiles.conftest import KEY, fault, finish, history, never_success
from tests.integration.profiles.lost_create import create, goes_to_a_person
from tests.integration.profiles.rate_limit import honours_retry_hint

NAME = "replicate_predictions"
STEP_S = 31.0  # past this profile's 30 s polling cap, well inside its 3600 s result deadline


async def start(gateway: Gateway, **input: Any) -> dict[str, Any]:
    r = await gateway.http.post(
        "/v1/operations",
        json={
            "provider": NAME,
            "kind": "prediction",
            "input": {"version": VERSION, "input": {"prompt": "one two three", **input}},
        },
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert r.status_code == 202, r.text
    return dict(r.json())


async def calls(fake: httpx2.AsyncClient) -> dict[str, int]:
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == 1
    [found] = stats["jobs"].values()
    return dict(found)


async def test_a_quick_prediction_is_collected_from_the_create_answer(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    made = await start(gateway)
    op_id = made["operation_id"]
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert result["result"] == ["one", "two", "three"]
    assert KEY not in str(await history(gateway, op_id))


async def test_a_slow_prediction_is_followed_to_its_output(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = (await start(gateway, run_seconds=12))["operation_id"]
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert result["result"] == ["one", "two", "three"]


async def test_a_failed_prediction_is_failed_with_its_error(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = (await start(gateway, run_seconds=8, fail=True))["operation_id"]
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done
    never_success(done)
    assert "fake model failure" in done["error"]["message"]


async def test_cancel_ends_cancelled_after_one_cancel_call(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = (await start(gateway, run_seconds=60))["operation_id"]
    await gateway.tick(STEP_S)
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
    assert r.status_code == 202, r.text
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("cancelled", "cancelled"), done
    never_success(done)
    assert (await calls(fake))["cancel_calls"] == 1


async def test_a_lost_create_answer_is_never_resent_and_goes_to_a_person(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    # The prediction is made, then the answer is cut off halfway: no id reached jobgate.
    await fault(fake, op="create", kind="drop")
    made = await create(
        gateway, NAME, "prediction", {"version": VERSION, "input": {"prompt": "one two"}}
    )
    await goes_to_a_person(gateway, made)
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == 1 and len(stats["jobs"]) == 1  # one create, one prediction
    assert stats["list_calls"] == 0


async def test_rate_limited_status_read_honours_retry_after_and_finishes(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id = (await start(gateway, run_seconds=20))["operation_id"]
    # 100 s: above the profile's 30 s backoff cap, inside its 600 s bound.
    limited = await honours_retry_hint(gateway, fake, op_id, op="get", hint=100, step=STEP_S)
    headers = {k.lower(): v for k, v in limited["response_headers"].items()}
    assert headers["retry-after"] == "100"
    done = await finish(gateway, op_id, step=STEP_S)
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
