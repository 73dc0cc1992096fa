"""Completion callbacks go to the address the SSRF guard checked, never to a later answer.

The resolver is injected (no outside DNS): `hooks.rebind.test` answers a public address
while the guard checks it and 127.0.0.1 to the lookup after, as a hostile DNS server that
rebinds its name answers. The gateway's HTTP client is a transport that does what a
client does with a name, through the same resolver: it resolves it and connects. A
loopback answer reaches a real listener here (the "internal service"); the public
address is answered in process, so nothing leaves this machine.
"""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.callbacks.delivery import CallbackDelivery
from app.core.runtime.clock import FakeClock
from app.main import create_app
from tests.conftest import Gateway, make_settings
from tests.support.servers import serve_app

NAME = "hooks.rebind.test"
PUBLIC = "93.184.216.34"  # answered in process below; never dialled


@dataclass
class Rebinding:
    """Answers `NAME` from `answers`, one per lookup (the last one repeats)."""

    answers: list[str] = field(default_factory=lambda: [PUBLIC])
    asked: int = 0

    async def __call__(self, host: str, port: int) -> list[str]:
        if host != NAME:
            raise OSError(f"{host} does not resolve here")
        answer = self.answers[min(self.asked, len(self.answers) - 1)]
        self.asked += 1
        return [answer]


@dataclass
class Internal:
    """The service inside the network that must never be reached."""

    hits: int = 0
    url: str = ""

    async def handle(self, request: Request) -> JSONResponse:
        self.hits += 1
        return JSONResponse({"internal": True}, status_code=200)


class ResolvingTransport(httpx2.AsyncBaseTransport):
    """A client's own connect: names go through `resolver`; a public address is answered
    here (204), any other is connected to for real."""

    def __init__(self, resolver: Rebinding) -> None:
        self.resolver = resolver
        self.inner = httpx2.AsyncHTTPTransport()
        self.public: list[httpx2.Request] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        host = request.url.host
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            address = ipaddress.ip_address((await self.resolver(host, request.url.port or 80))[0])
        if address.is_global:
            await request.aread()
            self.public.append(request)
            return httpx2.Response(204, request=request)
        connected = httpx2.Request(
            request.method,
            request.url.copy_with(host=str(address)),
            headers=request.headers,
            content=await request.aread(),
            extensions=request.extensions,
        )
        return await self.inner.handle_async_request(connected)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def internal() -> Iterator[Internal]:
    found = Internal()
    app = Starlette(routes=[Route("/hook", found.handle, methods=["POST"])])
    with serve_app(app) as url:
        found.url = url
        yield found


@pytest.fixture
def resolver() -> Rebinding:
    return Rebinding()


@pytest.fixture
def transport(resolver: Rebinding) -> ResolvingTransport:
    return ResolvingTransport(resolver)


@pytest.fixture
async def rebinding_gateway(
    database_url: str,
    mock_url: str,
    mock_client: httpx2.Client,
    tmp_path: Path,
    resolver: Rebinding,
    transport: ResolvingTransport,
) -> AsyncIterator[Gateway]:
    """The conftest's gateway, with the resolving transport as its HTTP client's."""
    clock = FakeClock()
    settings = make_settings(database_url, mock_url, tmp_path, allow_private_callbacks=False)
    app = create_app(settings, clock=clock, run_observer=False, transport=transport)
    async with app.router.lifespan_context(app):
        app.state.ctx.resolver = resolver
        asgi = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=asgi, base_url="http://127.0.0.1") as http:
            yield Gateway(http=http, app=app, clock=clock, mock=mock_client)


async def test_a_rebound_name_is_never_connected_to_its_internal_answer(
    rebinding_gateway: Gateway,
    resolver: Rebinding,
    transport: ResolvingTransport,
    internal: Internal,
) -> None:
    gw = rebinding_gateway
    port = httpx2.URL(internal.url).port
    callback = f"http://{NAME}:{port}/hook?token=t"
    r = await gw.start({"name": "fast"}, key=uuid.uuid4().hex, callback_url=callback)
    assert r.status_code == 202, r.text  # the guard saw the public answer
    op_id = r.json()["operation_id"]
    await gw.run_until_done(op_id, step=61)

    # From now on the name answers public to one lookup and internal to the next: the
    # guard's lookup before the POST, then the client's own when it connects.
    resolver.answers = [PUBLIC, "127.0.0.1"]
    resolver.asked = 0
    callbacks: CallbackDelivery = gw.app.state.callbacks
    assert await callbacks.tick() == 1

    assert internal.hits == 0
    assert resolver.asked == 1  # checked once, then connected to what was checked
    [sent] = transport.public
    assert (sent.url.host, sent.url.port) == (PUBLIC, port)
    assert sent.headers["host"] == f"{NAME}:{port}"  # the receiver sees the URL as given
    assert sent.url.params["token"] == "t"
    history = (await gw.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    [delivered] = [h for h in history if h["kind"] == "callback"]
    assert delivered["data"]["status_code"] == 204  # the public receiver's answer


async def test_an_internal_answer_at_delivery_is_refused_and_never_sent(
    rebinding_gateway: Gateway,
    resolver: Rebinding,
    transport: ResolvingTransport,
    internal: Internal,
) -> None:
    gw = rebinding_gateway
    port = httpx2.URL(internal.url).port
    r = await gw.start({"name": "fast"}, callback_url=f"http://{NAME}:{port}/hook")
    assert r.status_code == 202, r.text
    op_id = r.json()["operation_id"]
    await gw.run_until_done(op_id, step=61)
    resolver.answers = ["127.0.0.1"]
    assert await gw.app.state.callbacks.tick() == 1
    assert internal.hits == 0 and transport.public == []
    history = (await gw.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    [gave_up] = [h for h in history if h["kind"] == "callback"]
    assert "loopback" in gave_up["data"]["error"] and gave_up["data"]["status_code"] is None
