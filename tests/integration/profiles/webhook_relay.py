"""Catch a fake's signed webhooks, then hand them to the gateway as the provider sent them.

The gateway under test runs in-process on the test's event loop (its clock is fake),
so the fake cannot reach it over the network. A small real server takes each delivery
in its place; the test forwards the exact bytes and signature headers to
`POST /v1/webhooks/{provider}` through the gateway's real HTTP path, and can send one
again later (a replay) or change a byte of it first (a forgery).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx2
from fastapi import FastAPI, Request, Response

from tests.conftest import Gateway
from tests.integration.profiles.conftest import history
from tests.support.servers import serve_app

SIGNATURE_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature", "content-type")


@dataclass
class Delivery:
    """One webhook as it arrived: the signature headers and the raw body."""

    headers: dict[str, str]
    body: bytes
    query: dict[str, str]

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    url: str
    got: list[Delivery] = field(default_factory=list)


@contextmanager
def receiving(path: str) -> Iterator[Receiver]:
    """A real server at `path` that keeps every POST it gets (answering 204)."""
    app = FastAPI()
    receiver = Receiver(url="")

    @app.post(path)
    async def hook(request: Request) -> Response:
        kept = {k: v for k, v in request.headers.items() if k in SIGNATURE_HEADERS}
        receiver.got.append(Delivery(kept, await request.body(), dict(request.query_params)))
        return Response(status_code=204)

    with serve_app(app) as url:
        receiver.url = f"{url}{path}"
        yield receiver


async def flushed(fake: httpx2.AsyncClient, receiver: Receiver) -> list[Delivery]:
    """Every delivery the fake has planned, once it has attempted them all."""
    r = await fake.post("/_fake/webhooks/flush")
    assert r.status_code == 200, r.text
    assert all(d["status"] == 204 for d in r.json()["deliveries"]), r.json()
    return list(receiver.got)


async def forward(
    gateway: Gateway, provider: str, delivery: Delivery, body: bytes | None = None
) -> httpx2.Response:
    """Send the delivery (or, with `body`, a tampered copy) to the gateway's webhook route."""
    return await gateway.http.post(
        f"/v1/webhooks/{provider}",
        content=delivery.body if body is None else body,
        headers=delivery.headers,
    )


def to_wall_clock(gateway: Gateway) -> None:
    """Move the gateway's fake clock to now: the fakes sign with the wall clock, and the
    gateway checks the signature's timestamp against its own clock."""
    gap = (datetime.now(UTC) - gateway.clock.now()).total_seconds()
    assert gap >= 0, "the fake clock starts in the past"
    gateway.clock.advance(gap)


async def snapshot(gateway: Gateway, op_id: str) -> dict[str, Any]:
    """What an agent can see of the operation: its body and its history."""
    r = await gateway.http.get(f"/v1/operations/{op_id}")
    assert r.status_code == 200, r.text
    return {"body": r.json(), "history": await history(gateway, op_id)}
