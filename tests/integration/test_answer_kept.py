"""A provider's answer that arrives while the database is away is kept and written when
it returns (`write.apply`; docs/operations.md, "When storage or
the database fails").

The gateway reaches PostgreSQL through a proxy; its outbound transport cuts the proxy
the moment the provider's create answer (202 and the job id) has arrived, before the
gateway can write it. The provider is `mock_blind`, which has neither an idempotency
token nor a lookup: without the kept answer the operation would end
`create_unconfirmed` though exactly one job runs. The database comes back, the fake
clock moves the retry on, and the operation is bound to that one job and succeeds.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy.engine import make_url

from app.core.runtime.clock import FakeClock
from app.operations import repository as repo
from tests.conftest import Gateway, make_settings
from tests.support.single_create import PROFILES
from tests.support.tcp_proxy import TcpProxy, tcp_proxy
from tests.support.timing import QUICK_S, budget

pytestmark = pytest.mark.postgres_only


class CutAfterCreate(httpx2.AsyncBaseTransport):
    """The real transport; once a create's answer is read, the database is cut."""

    def __init__(self, proxy: TcpProxy) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.proxy = proxy
        self.creates = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "POST" and request.url.path == "/v1/jobs":
            self.creates += 1
            await response.aread()
            self.proxy.cut()  # the answer is here; the database goes before it is written
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
async def cut_gateway(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> AsyncIterator[tuple[Gateway, TcpProxy, CutAfterCreate]]:
    from app.main import create_app

    u = make_url(database_url)
    with tcp_proxy(u.host or "127.0.0.1", u.port or 5432) as proxy:
        proxied = u.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
        cutter = CutAfterCreate(proxy)
        clock = FakeClock()
        settings = make_settings(
            proxied, mock_url, tmp_path, profiles_dir=PROFILES, create_answer_seconds=0.2
        )
        app = create_app(settings, clock=clock, run_observer=False, transport=cutter)
        async with app.router.lifespan_context(app):
            transport = httpx2.ASGITransport(app=app)
            async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as h:
                yield Gateway(http=h, app=app, clock=clock, mock=mock_client), proxy, cutter
                proxy.restore()


async def _until(check: Any, what: str) -> None:
    ends = time.monotonic() + budget(QUICK_S)
    while not check():
        assert time.monotonic() < ends, what
        await asyncio.sleep(0.01)


async def test_a_create_answered_during_an_outage_is_bound_to_its_one_job(
    cut_gateway: tuple[Gateway, TcpProxy, CutAfterCreate],
) -> None:
    gw, proxy, cutter = cut_gateway
    key = uuid.uuid4().hex
    body = {"provider": "mock_blind", "kind": "report", "input": {"scenario": {"name": "fast"}}}
    r = await gw.http.post("/v1/operations", json=body, headers={"Idempotency-Key": key})
    # The intent was committed before the call; the answer is rendered while the database
    # is away: a 202 in flight, or a 503 that the agent retries with the same key.
    assert r.status_code in (202, 503), r.text
    await _until(
        lambda: gw.ctx.answers_waiting == 1 or not len(gw.ctx.background), "the create hangs"
    )
    assert cutter.creates == 1

    proxy.restore()
    ends = time.monotonic() + budget(QUICK_S)
    while len(gw.ctx.background):  # the kept answer's retry waits on the fake clock
        assert time.monotonic() < ends, "the kept answer was never written"
        gw.clock.advance(0.5)
        await asyncio.sleep(0.02)
    assert gw.ctx.answers_waiting == 0

    again = await gw.http.post("/v1/operations", json=body, headers={"Idempotency-Key": key})
    assert again.status_code in (200, 202), again.text
    op_id = again.json()["operation_id"]
    final = await gw.run_until_done(op_id)
    assert (final["state"], final["outcome"]) == ("succeeded", "succeeded"), final
    assert gw.jobs_for(op_id) == [final["remote_job_id"]]  # exactly one job
    assert cutter.creates == 1  # never sent again
    async with gw.ctx.db.read() as txn:
        rows = await repo.history(txn, op_id)
    path = [r.to_state for r in rows if r.kind == "transition"]
    assert path[:2] == ["create_pending", "accepted"], path  # never create_unknown/unconfirmed
    assert "create_unconfirmed" not in path and "create_unknown" not in path, path
