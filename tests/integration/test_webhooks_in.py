"""Provider webhooks in: verified, de-duplicated, and only ever a trigger for a status read.

Events are signed here exactly as the mock provider signs them (same helpers, same
secret), and sent through the gateway's real HTTP path.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import datetime, timedelta
from typing import Any

import httpx2
import pytest
from sqlalchemy import func, select

from app.operations import repository as repo
from app.providers.language.profile import WebhookSpec
from app.providers.language.secrets import SecretRef
from app.webhooks.models import WebhookEvent
from app.webhooks.verify import SignatureError, verify
from jobgate_fakes.mock.webhooks import signed_headers, webhook_body
from tests.conftest import Gateway

SECRET = "whsec_" + base64.b64encode(b"jobgate-test-webhook-secret-0001").decode()
OTHER_SECRET = "whsec_" + base64.b64encode(b"somebody-else-entirely-000000002").decode()


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"mock_webhook_secret": SECRET}


async def send(
    gateway: Gateway,
    job_id: str,
    state: str,
    msg_id: str,
    *,
    secret: str = SECRET,
    at: datetime | None = None,
) -> httpx2.Response:
    body = webhook_body(job_id, state, (1, 2))
    headers = signed_headers(secret, msg_id, body, at or gateway.clock.now())
    return await gateway.http.post("/v1/webhooks/mock", content=body.encode(), headers=headers)


async def snapshot(gateway: Gateway, op_id: str) -> dict[str, Any]:
    """Everything a webhook could change: the row, its history, the event rows."""
    async with gateway.ctx.db.transaction() as session:
        op = await repo.get(session, op_id)
        assert op is not None
        hist = await repo.history(session, op_id)
        events = (
            await session.execute(select(func.count()).select_from(WebhookEvent))
        ).scalar_one()
    return {
        "state": op.state,
        "version": op.version,
        "next_poll_at": op.next_poll_at,
        "history": [h.id for h in hist],
        "events": events,
    }


async def started(gateway: Gateway, scenario: dict[str, Any]) -> tuple[str, str, str]:
    r = await gateway.start(scenario)
    assert r.status_code == 202, r.text
    body = r.json()
    token = await gateway.token_of(body["operation_id"])
    return body["operation_id"], body["remote_job_id"], token


def status_calls(gateway: Gateway, token: str, job_id: str) -> int:
    return int(gateway.stats(token)["jobs"][job_id]["status_calls"])


async def test_duplicate_and_out_of_order_webhooks_never_decide_the_state(
    gateway: Gateway,
) -> None:
    # polls=2: the mock answers running, running, then succeeded.
    op_id, job_id, token = await started(gateway, {"name": "slow", "polls": 2})
    before = await snapshot(gateway, op_id)
    assert before["state"] in ("accepted", "observing")
    calls0 = status_calls(gateway, token, job_id)

    first = await send(gateway, job_id, "succeeded", "msg_done")
    assert first.status_code == 202, first.text
    assert first.json()["status"] == "accepted" and first.json()["operation_id"] == op_id
    again = await send(gateway, job_id, "succeeded", "msg_done")
    assert again.status_code == 200 and again.json()["status"] == "duplicate"

    after = await snapshot(gateway, op_id)
    # The webhook alone changes no state and makes no provider call; it makes the op due now.
    assert after["state"] == before["state"] and after["version"] == before["version"]
    assert after["next_poll_at"] == gateway.clock.now()
    assert after["events"] == 1
    assert status_calls(gateway, token, job_id) == calls0

    # The status read the webhook asked for says "running": still not succeeded.
    await gateway.tick()
    assert status_calls(gateway, token, job_id) == calls0 + 1
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["done"] is False and body["state"] == "observing"

    final = await gateway.run_until_done(op_id, step=61)
    assert final["state"] == "succeeded" and final["result"] is not None
    version = (await snapshot(gateway, op_id))["version"]

    # A stale "running" event after success is recorded but moves nothing.
    stale = await send(gateway, job_id, "running", "msg_stale")
    assert stale.status_code == 202 and stale.json()["status"] == "accepted"
    calls = status_calls(gateway, token, job_id)
    await gateway.tick(61)
    end = await snapshot(gateway, op_id)
    assert end["state"] == "succeeded" and end["version"] == version
    assert end["next_poll_at"] is None and end["events"] == 2
    assert status_calls(gateway, token, job_id) == calls

    hist = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    kinds = [(h["kind"], h["to_state"], h["cause"]) for h in hist]
    hooks = [i for i, h in enumerate(hist) if h["kind"] == "webhook"]
    assert len(hooks) == 2  # one per distinct event id, the duplicate left no row
    transitions = [h["to_state"] for h in hist if h["kind"] == "transition"]
    assert transitions.count("succeeded") == 1 and transitions.count("result_collecting") == 1
    assert transitions[-2:] == ["result_collecting", "succeeded"]  # never moved backwards
    collecting = next(i for i, k in enumerate(kinds) if k[1] == "result_collecting")
    reads = [
        i
        for i, h in enumerate(hist)
        if h["kind"] == "exchange" and h["cause"].startswith("status") and i > hooks[0]
    ]
    assert reads and reads[0] < collecting  # a real status read came between
    assert hist[hooks[0]]["data"]["event_id"] == "msg_done"
    assert SECRET not in str(hist)


async def test_bad_signature_stale_timestamp_and_unknown_job(gateway: Gateway) -> None:
    op_id, job_id, _ = await started(gateway, {"name": "slow", "polls": 5})
    before = await snapshot(gateway, op_id)
    now = gateway.clock.now()

    bad = await send(gateway, job_id, "succeeded", "msg_bad", secret=OTHER_SECRET)
    assert bad.status_code == 401
    assert bad.json()["error"]["code"] == "webhook_signature_invalid"

    stale = await send(gateway, job_id, "succeeded", "msg_old", at=now - timedelta(seconds=301))
    assert stale.status_code == 401
    early = await send(gateway, job_id, "succeeded", "msg_new", at=now + timedelta(seconds=301))
    assert early.status_code == 401

    body = webhook_body(job_id, "succeeded", (1, 2))
    unsigned = await gateway.http.post(
        "/v1/webhooks/mock", content=body, headers={"content-type": "application/json"}
    )
    assert unsigned.status_code == 401

    unknown = await send(gateway, "job_does_not_exist", "succeeded", "msg_unknown")
    assert unknown.status_code == 202 and unknown.json()["status"] == "ignored"

    assert await snapshot(gateway, op_id) == before  # nothing changed, no event rows

    # Within tolerance (300 s, the mock profile) is accepted.
    ok = await send(gateway, job_id, "running", "msg_ok", at=now - timedelta(seconds=299))
    assert ok.status_code == 202 and ok.json()["status"] == "accepted"


async def test_unknown_provider(gateway: Gateway) -> None:
    r = await gateway.http.post("/v1/webhooks/nope", content=b"{}")
    assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_provider"


@pytest.mark.parametrize("gateway_settings", [{}])
async def test_without_a_configured_secret_nothing_is_accepted(gateway: Gateway) -> None:
    op_id, job_id, _ = await started(gateway, {"name": "slow", "polls": 5})
    before = await snapshot(gateway, op_id)
    r = await send(gateway, job_id, "succeeded", "msg_1")
    assert r.status_code == 503 and r.json()["error"]["code"] == "webhook_secret_unset"
    assert "JOBGATE_MOCK_WEBHOOK_SECRET" in r.json()["error"]["message"]
    assert await snapshot(gateway, op_id) == before


def test_hmac_scheme_checks_the_raw_body() -> None:
    spec = WebhookSpec(scheme="hmac", secret=SecretRef(env="X"), signature_header="X-Sig")
    body = b'{"id":"evt_1"}'
    good = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    now = datetime(2026, 1, 1).astimezone()
    verify(spec, "s3cret", {"X-Sig": f"sha256={good}"}, body, now)
    verify(spec, "s3cret", {"x-sig": good}, body, now)
    flipped = good[:-1] + ("1" if good.endswith("0") else "0")
    for headers in ({"X-Sig": flipped}, {}, {"X-Sig": "sha256="}):
        with pytest.raises(SignatureError):
            verify(spec, "s3cret", headers, body, now)
    with pytest.raises(SignatureError):
        verify(spec, "s3cret", {"X-Sig": good}, body + b" ", now)
