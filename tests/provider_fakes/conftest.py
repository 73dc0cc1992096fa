"""Shared helpers for the provider-fake tests: in-process clients and a webhook receiver."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI, Request, Response

from tests.support.servers import serve_app

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def client(app: FastAPI, **headers: str) -> httpx2.AsyncClient:
    """An httpx2 client that calls `app` in-process (no sockets)."""
    transport = httpx2.ASGITransport(app=app)
    return httpx2.AsyncClient(transport=transport, base_url="http://fake.test", headers=headers)


async def fault(c: httpx2.AsyncClient, **spec: Any) -> None:
    """Queue one fault on the fake behind `c`."""
    r = await c.post("/_fake/faults", json=spec)
    assert r.status_code == 200, r.text


async def stats(c: httpx2.AsyncClient, reference: str | None = None) -> dict[str, Any]:
    params = {"reference": reference} if reference is not None else {}
    return dict((await c.get("/_fake/stats", params=params)).json())


@dataclass
class Receiver:
    """A webhook endpoint on a real server that keeps every request it gets."""

    url: str
    received: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    app = FastAPI()
    got: list[dict[str, Any]] = []

    @app.post("/hook")
    async def hook(request: Request) -> Response:
        got.append({"headers": dict(request.headers), "body": (await request.body()).decode()})
        return Response(status_code=204)

    with serve_app(app) as url:
        yield Receiver(url + "/hook", got)
