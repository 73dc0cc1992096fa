"""OpenAI's signed batch webhooks through the agent API, verified with the configured secret.

OpenAI has no endpoint that serves the signing secret (the dashboard shows it once), so
the bundled profile reads `OPENAI_WEBHOOK_SECRET`. The fake is told the same secret and
the project's webhook URL (FakeSettings), and sends a Standard Webhooks-signed
`batch.<status>` event when a batch ends; a relay (webhook_relay.py) catches it and the
test hands it to `POST /v1/webhooks/openai_batch` byte for byte. The gateway's clock is
not moved between the last poll and the webhook, so the read that follows is the
webhook's doing.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from jobgate_fakes.providers import create_app
from jobgate_fakes.providers.settings import FakeSettings
from tests.conftest import Gateway
from tests.integration.profiles.conftest import KEY, history
from tests.integration.profiles.conftest import start as start_op
from tests.integration.profiles.webhook_relay import (
    Receiver,
    flushed,
    forward,
    receiving,
    snapshot,
    to_wall_clock,
)
from tests.support.servers import serve_app

NAME = "openai_batch"
SECRET = "whsec_" + base64.b64encode(b"openai-project-webhook-secret-01").decode()
EXTRA_ENV = {"OPENAI_WEBHOOK_SECRET": SECRET}
FIRST_POLL_S = 31.0  # past the profile's 30 s first delay, well inside the 300 s tolerance


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with receiving(f"/v1/webhooks/{NAME}") as found:
        yield found


@pytest.fixture(scope="module")
def served(receiver: Receiver) -> Iterator[str]:
    """The OpenAI fake, with the project's webhook endpoint and signing secret set."""
    settings = FakeSettings(api_key=KEY, webhook_url=receiver.url, webhook_secret=SECRET)
    with serve_app(create_app(NAME, settings)) as url:
        yield url


@pytest.fixture
def gateway_settings(fake: httpx2.AsyncClient, receiver: Receiver) -> dict[str, Any]:
    receiver.got.clear()
    return {}


async def started(gateway: Gateway) -> str:
    """A three-hour batch the gateway has read once; its next read is not due yet."""
    to_wall_clock(gateway)
    line = {
        "custom_id": "a",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": "gpt-4o-mini", "max_tokens": 3 * 1024, "messages": []},
    }
    made = await start_op(gateway, NAME, {"endpoint": "/v1/chat/completions", "requests": [line]})
    op_id = str(made["operation_id"])
    await gateway.tick(FIRST_POLL_S)
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["state"] == "observing" and body["remote_state"] == "in_progress", body
    return op_id


async def retrieves(fake: httpx2.AsyncClient) -> int:
    [calls] = (await fake.get("/_fake/stats")).json()["jobs"].values()
    return int(calls.get("retrieve_calls", 0))


async def test_a_signed_batch_webhook_moves_the_operation_on_before_the_next_poll(
    gateway: Gateway, fake: httpx2.AsyncClient, receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    op_id = await started(gateway)
    assert (await fake.post("/_fake/advance", json={"steps": 5})).status_code == 200
    [hook] = await flushed(fake, receiver)
    assert hook.json()["type"] == "batch.completed"
    reads = await retrieves(fake)
    await gateway.tick()  # no webhook yet, no poll due: nothing is read
    assert await retrieves(fake) == reads

    r = await forward(gateway, NAME, hook)
    assert r.status_code == 202, r.text
    ack = r.json()
    assert (ack["status"], ack["operation_id"]) == ("accepted", op_id)
    for _ in range(3):  # the read, then the collection; the clock never moves
        await gateway.tick()
    assert await retrieves(fake) == reads + 1
    done = (await gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 1})).json()
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    rows = await history(gateway, op_id)
    assert [e["data"]["event_type"] for e in rows if e["kind"] == "webhook"] == ["batch.completed"]
    for shown in (ack, done, rows, caplog.text):
        assert SECRET not in str(shown) and SECRET.removeprefix("whsec_") not in str(shown)


async def test_a_forged_batch_webhook_is_refused_and_writes_nothing(
    gateway: Gateway, fake: httpx2.AsyncClient, receiver: Receiver
) -> None:
    op_id = await started(gateway)
    assert (await fake.post("/_fake/advance", json={"steps": 5})).status_code == 200
    [hook] = await flushed(fake, receiver)
    before = await snapshot(gateway, op_id)
    forged = hook.body.replace(b'"batch.completed"', b'"batch.cancelled"')
    assert forged != hook.body
    r = await forward(gateway, NAME, hook, body=forged)
    assert r.status_code == 401, r.text
    assert r.json()["error"]["code"] == "webhook_signature_invalid"
    assert SECRET.removeprefix("whsec_") not in r.text
    assert await snapshot(gateway, op_id) == before
