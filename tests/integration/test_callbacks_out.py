"""Completion callbacks out: one signed event per (operation, final state), retried, recorded.

Receivers are small real HTTP servers on loopback (allowed here by settings); time
is the gateway's fake clock, and the delivery loop runs only when a test ticks it.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import func, select
from standardwebhooks.webhooks import Webhook
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.callbacks import outbox
from app.callbacks.delivery import CallbackDelivery, retry_delay
from app.operations import repository as repo
from app.operations.domain.models import OperationTable
from app.operations.domain.states import State
from jobgate_fakes.mock.webhooks import signed_headers, webhook_body
from tests.conftest import Gateway
from tests.support.servers import serve_app

WEBHOOK_SECRET = "whsec_" + base64.b64encode(b"jobgate-test-webhook-secret-0001").decode()
CALLBACK_SECRET = "whsec_" + base64.b64encode(b"jobgate-test-callback-secret-002").decode()


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {
        "mock_webhook_secret": WEBHOOK_SECRET,
        "callback_secret": CALLBACK_SECRET,
        "allow_private_callbacks": True,
    }


@dataclass
class Receiver:
    """Counts what it receives; answers 500 to the first `fail_first` requests."""

    fail_first: int = 0
    seen: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    url: str = ""

    async def handle(self, request: Request) -> JSONResponse:
        self.seen.append((dict(request.headers), await request.body()))
        if len(self.seen) <= self.fail_first:
            return JSONResponse({"error": "not now"}, status_code=500)
        return JSONResponse({"ok": True})


def run_receiver(receiver: Receiver) -> Iterator[Receiver]:
    app = Starlette(routes=[Route("/hook", receiver.handle, methods=["POST"])])
    with serve_app(app) as url:
        receiver.url = f"{url}/hook?token=receiver-token"
        yield receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from run_receiver(Receiver())


@pytest.fixture
def flaky_receiver() -> Iterator[Receiver]:
    yield from run_receiver(Receiver(fail_first=3))


def delivery(gateway: Gateway) -> CallbackDelivery:
    return gateway.app.state.callbacks  # type: ignore[no-any-return]


def assert_signed(headers: dict[str, str], body: bytes) -> None:
    """Verify as a receiver would, with the timestamp the gateway's (fake) clock gave."""
    sent_at = datetime.fromtimestamp(int(headers["webhook-timestamp"]), tz=UTC)
    expected = Webhook(CALLBACK_SECRET).sign(headers["webhook-id"], sent_at, body.decode())
    assert expected in headers["webhook-signature"].split(" ")


async def outbox_rows(gateway: Gateway, op_id: str) -> list[Any]:
    async with gateway.ctx.db.transaction() as session:
        return await outbox.for_operation(session, op_id)


async def test_completion_is_delivered_exactly_once(gateway: Gateway, receiver: Receiver) -> None:
    r = await gateway.start({"name": "slow", "polls": 5}, callback_url=receiver.url)
    assert r.status_code == 202, r.text
    op_id, job_id = r.json()["operation_id"], r.json()["remote_job_id"]
    assert await delivery(gateway).tick() == 0  # not done: nothing to send

    # The provider says "succeeded" by webhook, twice under two ids, and the poll sees it.
    for msg_id in ("msg_a", "msg_b"):
        body = webhook_body(job_id, "succeeded", (6, 6))
        headers = signed_headers(WEBHOOK_SECRET, msg_id, body, gateway.clock.now())
        hook = await gateway.http.post("/v1/webhooks/mock", content=body, headers=headers)
        assert hook.status_code == 202
    final = await gateway.run_until_done(op_id, step=61)
    assert final["status"] == "succeeded"

    # A second enqueue for the same (operation, final state) is refused by the database.
    async with gateway.ctx.db.transaction() as session:
        op = await repo.get(session, op_id)
        assert op is not None
        again = await outbox.enqueue_completion(session, op, State.SUCCEEDED, gateway.clock.now())
    assert again is False
    rows = await outbox_rows(gateway, op_id)
    assert len(rows) == 1 and rows[0].event_id == f"{op_id}:succeeded"

    # Two delivery workers (as two processes would) race for it: one claims it.
    other = CallbackDelivery(
        dataclasses.replace(gateway.ctx, worker_id="second-process"), delivery(gateway).http
    )
    claimed = await asyncio.gather(delivery(gateway).tick(), other.tick())
    assert sorted(claimed) == [0, 1]
    gateway.clock.advance(7200)
    assert await delivery(gateway).tick() == 0 and await other.tick() == 0

    assert len(receiver.seen) == 1
    headers, body = receiver.seen[0]
    assert headers["webhook-id"] == f"{op_id}:succeeded"
    assert_signed(headers, body)
    event = json.loads(body)
    assert event["type"] == "operation.completed"
    assert event["data"]["operation_id"] == op_id
    assert event["data"]["status"] == "succeeded" and event["data"]["done"] is True

    rows = await outbox_rows(gateway, op_id)
    assert rows[0].status == "delivered" and rows[0].attempts == 1
    hist = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    notes = [h for h in hist if h["kind"] == "callback"]
    assert len(notes) == 1 and "delivered on attempt 1" in notes[0]["cause"]
    assert "receiver-token" not in json.dumps(hist)  # the URL's query is not kept


async def test_receiver_failing_three_times_gets_it_on_the_fourth(
    gateway: Gateway, flaky_receiver: Receiver
) -> None:
    r = await gateway.start({"name": "fast"}, callback_url=flaky_receiver.url)
    final = await gateway.run_until_done(r.json()["operation_id"], step=61)
    op_id = final["operation_id"]
    worker = delivery(gateway)
    scale = gateway.ctx.settings.time_scale

    for attempt in (1, 2, 3):
        assert await worker.tick() == 1
        assert len(flaky_receiver.seen) == attempt
        assert await worker.tick() == 0  # not due again before its backoff
        gateway.clock.advance(retry_delay(attempt, scale) - 1)
        assert await worker.tick() == 0
        gateway.clock.advance(1)
    assert await worker.tick() == 1
    gateway.clock.advance(86400)
    assert await worker.tick() == 0

    assert len(flaky_receiver.seen) == 4
    ids = {h["webhook-id"] for h, _ in flaky_receiver.seen}
    assert ids == {f"{op_id}:succeeded"}  # the same event every time
    for headers, body in flaky_receiver.seen:
        assert_signed(headers, body)
    (row,) = await outbox_rows(gateway, op_id)
    assert row.status == "delivered" and row.attempts == 4
    async with gateway.ctx.db.transaction() as session:
        attempts = await outbox.attempts_for(session, row.id)
    assert [a.attempt for a in attempts] == [1, 2, 3, 4]
    assert [a.status_code for a in attempts] == [500, 500, 500, 200]
    assert [a.outcome for a in attempts] == ["retry", "retry", "retry", "delivered"]
    gaps = [(b.at - a.at).total_seconds() for a, b in zip(attempts, attempts[1:], strict=False)]
    assert gaps == [retry_delay(n, scale) for n in (1, 2, 3)]  # capped exponential backoff


async def test_operation_without_callback_url_enqueues_nothing(gateway: Gateway) -> None:
    r = await gateway.start({"name": "fast"})
    final = await gateway.run_until_done(r.json()["operation_id"], step=61)
    assert final["done"] is True
    assert await outbox_rows(gateway, final["operation_id"]) == []


FORBIDDEN = [
    "http://127.0.0.1:9/hook",
    "http://localhost/hook",
    "http://[::1]/hook",
    "http://10.1.2.3/hook",
    "http://192.168.0.10/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[::ffff:127.0.0.1]/hook",
    "http://[fe80::1]/hook",
    "http://[fec0::1]/hook",
]


@pytest.mark.parametrize("gateway_settings", [{}])
@pytest.mark.parametrize("url", FORBIDDEN)
async def test_private_callback_urls_are_refused_and_nothing_is_written(
    gateway: Gateway, url: str
) -> None:
    r = await gateway.start({"name": "fast"}, callback_url=url)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "callback_url_forbidden"
    async with gateway.ctx.db.transaction() as session:
        ops = (await session.execute(select(func.count()).select_from(OperationTable))).scalar_one()
        assert await repo.count_by_state(session) == {}
    assert ops == 0
    listed = (await gateway.http.get("/v1/operations")).json()
    assert listed["items"] == []


async def test_private_callback_urls_are_allowed_when_settings_say_so(gateway: Gateway) -> None:
    r = await gateway.start({"name": "fast"}, callback_url="http://127.0.0.1:9/hook")
    assert r.status_code == 202, r.text
