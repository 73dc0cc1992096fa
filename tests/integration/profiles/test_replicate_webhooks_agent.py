"""Replicate's signed webhooks through the agent API, verified with the fetched secret.

The bundled profile sets no `REPLICATE_WEBHOOK_SECRET` here, so the gateway asks the fake
for it (`GET /v1/webhooks/default/secret`, the profile's `secret_fetch`) with the
profile's credential and keeps it. The fake sends Standard Webhooks-signed predictions
to `JOBGATE_REPLICATE_WEBHOOK_URL`; a relay (webhook_relay.py) catches them and the test
hands them to `POST /v1/webhooks/replicate_predictions` byte for byte. The gateway's
clock is fake and never moved here between a poll and a webhook, so any status read
after a webhook was caused by it, not by the polling schedule.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from jobgate_fakes.providers.replicate_predictions.model import VERSION
from tests.conftest import Gateway
from tests.integration.profiles.conftest import KEY, history
from tests.integration.profiles.webhook_relay import (
    Receiver,
    flushed,
    forward,
    receiving,
    snapshot,
    to_wall_clock,
)

NAME = "replicate_predictions"
STEP_S = 31.0  # past this profile's 30 s polling cap


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with receiving(f"/v1/webhooks/{NAME}") as found:
        yield found


@pytest.fixture
def gateway_settings(
    fake: httpx2.AsyncClient, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """Predictions ask for webhooks at the relay (set before the gateway starts)."""
    receiver.got.clear()
    monkeypatch.setenv("JOBGATE_REPLICATE_WEBHOOK_URL", receiver.url)
    return {}


async def the_secret(fake: httpx2.AsyncClient) -> str:
    r = await fake.get("/v1/webhooks/default/secret", headers={"Authorization": f"Bearer {KEY}"})
    assert r.status_code == 200, r.text
    return str(r.json()["key"])


async def started(gateway: Gateway, fake: httpx2.AsyncClient, run_seconds: int) -> str:
    """A running prediction the gateway has read once; its next read is not due yet."""
    to_wall_clock(gateway)
    r = await gateway.http.post(
        "/v1/operations",
        json={
            "provider": NAME,
            "kind": "prediction",
            "input": {
                "version": VERSION,
                "input": {"prompt": "one two", "run_seconds": run_seconds},
            },
        },
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert r.status_code == 202, r.text
    op_id = str(r.json()["operation_id"])
    await gateway.tick(STEP_S)
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["state"] == "observing" and body["remote_state"] == "processing", body
    return op_id


async def gets(fake: httpx2.AsyncClient) -> int:
    stats = (await fake.get("/_fake/stats")).json()
    [calls] = stats["jobs"].values()
    return int(calls.get("get_calls", 0))


async def advance(fake: httpx2.AsyncClient, steps: int) -> None:
    r = await fake.post("/_fake/advance", json={"steps": steps})
    assert r.status_code == 200, r.text


async def test_a_signed_webhook_moves_the_operation_on_before_the_next_poll(
    gateway: Gateway, fake: httpx2.AsyncClient, receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    op_id = await started(gateway, fake, run_seconds=60)
    await advance(fake, 60)  # the model finishes at the provider: a `completed` webhook
    completed = [d for d in await flushed(fake, receiver) if d.json()["status"] == "succeeded"]
    assert len(completed) == 1 and completed[0].query == {"jobgate_ref": op_id}
    reads = await gets(fake)
    await gateway.tick()  # no webhook yet, no poll due: nothing is read
    assert await gets(fake) == reads
    assert not (await gateway.http.get(f"/v1/operations/{op_id}")).json()["done"]

    r = await forward(gateway, NAME, completed[0])
    assert r.status_code == 202, r.text
    ack = r.json()
    assert (ack["status"], ack["operation_id"]) == ("accepted", op_id)
    await gateway.tick()  # the clock has not moved: only the webhook made this read due
    assert await gets(fake) == reads + 1
    r = await gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 1})
    done = r.json()
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    result = (await gateway.http.get(f"/v1/operations/{op_id}/result")).json()
    assert result["result"] == ["one", "two"]
    rows = await history(gateway, op_id)
    [hook] = [e for e in rows if e["kind"] == "webhook"]
    assert hook["data"]["status_read_scheduled"] is True

    secret = await the_secret(fake)
    for shown in (ack, done, result, rows, caplog.text):
        assert secret not in str(shown) and secret.removeprefix("whsec_") not in str(shown)
    assert caplog.text.count("webhook secret for replicate_predictions fetched") == 1


async def test_forged_and_replayed_webhooks_are_refused_and_write_nothing(
    gateway: Gateway, fake: httpx2.AsyncClient, receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    op_id = await started(gateway, fake, run_seconds=60)
    await advance(fake, 1)  # one more second of output: one `output` webhook
    [*_, hook] = await flushed(fake, receiver)
    assert hook.json()["status"] == "processing"
    before = await snapshot(gateway, op_id)
    reads = await gets(fake)

    forged = hook.body.replace(b'"processing"', b'"succeeded"')
    assert forged != hook.body
    r = await forward(gateway, NAME, hook, body=forged)
    assert r.status_code == 401, r.text
    assert r.json()["error"]["code"] == "webhook_signature_invalid"
    assert await snapshot(gateway, op_id) == before

    r = await forward(gateway, NAME, hook)  # the genuine one: recorded, a read scheduled
    assert r.status_code == 202 and r.json()["status"] == "accepted", r.text
    after = await snapshot(gateway, op_id)
    r = await forward(gateway, NAME, hook)  # the same delivery again: recorded once
    assert r.status_code == 200 and r.json()["status"] == "duplicate", r.text
    assert await snapshot(gateway, op_id) == after

    gateway.clock.advance(301)  # past the profile's 300 s tolerance: a stale replay
    before = await snapshot(gateway, op_id)
    r = await forward(gateway, NAME, hook)
    assert r.status_code == 401, r.text
    error = r.json()["error"]
    assert error["code"] == "webhook_signature_invalid" and "tolerance" in error["message"]
    assert await snapshot(gateway, op_id) == before
    assert await gets(fake) == reads  # nothing refused made a status read due

    secret = await the_secret(fake)
    rows = await history(gateway, op_id)
    for shown in (r.json(), rows, caplog.text):
        assert secret not in str(shown) and secret.removeprefix("whsec_") not in str(shown)


async def secret_calls(fake: httpx2.AsyncClient) -> int:
    return int((await fake.get("/_fake/stats")).json()["calls"].get("webhook_secret", 0))


async def test_an_anonymous_flood_makes_at_most_one_credentialed_call_a_minute(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    """Anyone can post to the webhook route; each fetch of the secret is a call with the
    operator's credential. While the provider fails it, and while forgeries ask for a
    fresh one, a flood of events makes one call a minute, counted at the provider."""
    anonymous = {
        "webhook-id": "msg_flood",
        "webhook-timestamp": "1",
        "webhook-signature": "v1,Zm9yZ2Vk",
    }
    path = f"/v1/webhooks/{NAME}"
    await fault_secret(fake)
    for _ in range(30):
        r = await gateway.http.post(path, content=b'{"id": "x"}', headers=anonymous)
        assert r.status_code == 503 and r.json()["error"]["code"] == "webhook_secret_unset"
    assert await secret_calls(fake) == 1

    assert (await fake.delete("/_fake/faults")).status_code == 200
    gateway.clock.advance(61)
    for _ in range(30):  # the secret is fetched once; forgeries do not refetch it now
        r = await gateway.http.post(path, content=b'{"id": "x"}', headers=anonymous)
        assert r.status_code == 401, r.text
    assert await secret_calls(fake) == 2
    gateway.clock.advance(61)
    await fault_secret(fake)
    for _ in range(30):  # a minute on, one refetch (failing), then none
        r = await gateway.http.post(path, content=b'{"id": "x"}', headers=anonymous)
        assert r.status_code == 401, r.text
    assert await secret_calls(fake) == 3


async def fault_secret(fake: httpx2.AsyncClient) -> None:
    r = await fake.post(
        "/_fake/faults", json={"op": "webhook_secret", "kind": "error_before", "times": 100}
    )
    assert r.status_code == 200, r.text
