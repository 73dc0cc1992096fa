"""The gateway's outbound client (app/providers/calls/outbound.py): a connection the server
closed never reused, an open one reused, proxies kept, a test resolver's names sent
to its address with the name as Host."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx2
import pytest

from app.providers.calls.outbound import outbound_client
from tests.support.timing import QUICK_S, budget

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


@asynccontextmanager
async def server(
    answer: Callable[[bytes], bytes], *, close_after: bool
) -> AsyncIterator[tuple[str, list[bytes], list[int], asyncio.Queue[None]]]:
    """A local HTTP/1.1 server: `answer(request head)` for each request; with `close_after`
    it closes every connection after its first answer (keep-alive not announced as ended,
    as a server that times out idle connections does). Yields the URL, the request heads
    seen, the connections opened (by count) and a queue with one item per connection
    closed."""
    heads: list[bytes] = []
    opened: list[int] = []
    closed: asyncio.Queue[None] = asyncio.Queue()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened.append(1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                heads.append(head)
                writer.write(answer(head))
                await writer.drain()
                if close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()
        await writer.wait_closed()
        closed.put_nowait(None)

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    async with srv:
        yield f"http://127.0.0.1:{port}", heads, opened, closed


async def test_a_connection_the_server_closed_is_not_reused() -> None:
    async with server(lambda _: OK, close_after=True) as (url, heads, opened, closed):
        async with outbound_client() as http:
            for _ in range(3):
                r = await http.get(url)
                assert r.text == "ok"
                # The server has closed the connection before the next request is
                # assigned: that is seen on the socket, so a new connection is opened.
                await asyncio.wait_for(closed.get(), budget(QUICK_S))
    assert len(heads) == 3
    assert len(opened) == 3


async def test_an_open_idle_connection_is_reused() -> None:
    async with server(lambda _: OK, close_after=False) as (url, heads, opened, _):
        async with outbound_client() as http:
            for _ in range(3):
                assert (await http.get(url)).text == "ok"
    assert len(heads) == 3
    assert len(opened) == 1


async def test_a_proxy_from_the_environment_is_still_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with server(lambda _: OK, close_after=False) as (proxy, heads, _, _):
        monkeypatch.setenv("HTTP_PROXY", proxy)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        async with outbound_client() as http:
            assert (await http.get("http://provider.invalid/v1/jobs/1")).text == "ok"
    # A proxy gets the absolute form of the target.
    assert heads[0].startswith(b"GET http://provider.invalid/v1/jobs/1 HTTP/1.1")


async def test_a_test_transport_is_used_as_given() -> None:
    transport = httpx2.MockTransport(lambda request: httpx2.Response(204))
    async with outbound_client(transport) as http:
        assert (await http.get("http://provider.invalid/")).status_code == 204


async def test_a_resolver_sends_a_name_to_its_address_with_the_name_as_host() -> None:
    async with server(lambda _: OK, close_after=False) as (url, heads, _, _):
        port = int(url.rsplit(":", 1)[1])

        async def resolver(host: str, _port: int) -> list[str]:
            assert host == "provider.test"
            return ["127.0.0.1"]

        async with outbound_client(resolver=resolver) as http:
            assert (await http.get(f"http://provider.test:{port}/v1")).text == "ok"

        async def nothing(host: str, _port: int) -> list[str]:
            return []

        async with outbound_client(resolver=nothing) as http:
            with pytest.raises(httpx2.ConnectError):
                await http.get(f"http://provider.test:{port}/v1")
    assert len(heads) == 1 and f"Host: provider.test:{port}".encode() in heads[0]
