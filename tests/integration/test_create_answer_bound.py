"""`POST /v1/operations` answers within `create_answer_seconds` however slow the provider's
create is; the create goes on under its intake lease, and a retry with the same key meets
it (docs/agent-api.md, "Creating").

In-process: the provider's create is held at a gate the test opens (no real waiting for
the provider), the answer bound is scaled down to 0.2 s, and jobs are counted at the
mock provider. With real processes: the gateway is killed while such a create is in
flight, and the crash recovery of an in-flight create takes over.
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

from app.core.runtime.clock import FakeClock
from tests.conftest import Gateway, make_settings
from tests.support.processes import gateway_env, gateway_process, post_operation
from tests.support.timing import PROCESS_WORK_S, budget

BOUND = 0.2  # create_answer_seconds, scaled down from the default 2 s


class Gate(httpx2.AsyncBaseTransport):
    """The real transport, except that a create waits until the test opens the gate."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.open = asyncio.Event()
        self.creates = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST" and request.url.path == "/v1/jobs":
            self.creates += 1
            await self.open.wait()
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
async def gated(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> AsyncIterator[tuple[Gateway, Gate]]:
    from app.main import create_app

    gate = Gate()
    clock = FakeClock()
    settings = make_settings(database_url, mock_url, tmp_path, create_answer_seconds=BOUND)
    app = create_app(settings, clock=clock, run_observer=False, transport=gate)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield Gateway(http=http, app=app, clock=clock, mock=mock_client), gate
            gate.open.set()  # never leave a create held when the gateway shuts down


async def test_a_slow_create_is_answered_in_flight_and_a_retry_meets_it(
    gated: tuple[Gateway, Gate],
) -> None:
    gw, gate = gated
    key = uuid.uuid4().hex
    started = time.perf_counter()
    r = await gw.start({"name": "fast"}, key=key)
    took = time.perf_counter() - started
    assert r.status_code == 202, r.text
    assert BOUND <= took < BOUND + budget(1.5), took  # waited the bound, not the provider
    body = r.json()
    assert (body["state"], body["status"], body["done"]) == ("create_pending", "processing", False)
    assert body["outcome"] is None and body["remote_job_id"] is None
    for words in ("is IN PROGRESS", "KEEP WAITING", "has not answered the create yet"):
        assert words in body["message"], body["message"]
    assert gate.creates == 1 and len(gw.ctx.background) == 1  # still in flight
    op_id = body["operation_id"]

    again = await gw.start({"name": "fast"}, key=key)  # the agent's retry, same key
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["operation_id"] == op_id and again.json()["state"] == "create_pending"
    assert gate.creates == 1  # met the create in flight: nothing sent again

    gate.open.set()  # the provider answers at last
    await gw.ctx.background.drain()
    final = await gw.run_until_done(op_id)
    assert final["state"] == "succeeded"
    assert gw.jobs_for(op_id) == [final["remote_job_id"]]  # exactly one job, at the provider
    token = await gw.token_of(op_id)
    assert gw.stats(token)["creates_by_token"] == {token: 1}


async def test_a_fast_create_is_answered_as_before(gated: tuple[Gateway, Gate]) -> None:
    gw, gate = gated
    gate.open.set()
    body = (await gw.start({"name": "sync"})).json()
    assert body["state"] == "succeeded" and body["done"] is True  # within the bound: done


def test_a_gateway_killed_during_a_slow_create_resumes_it(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    """The create outlives its request, not its process: the lease lapses and the
    in-flight create is treated as ambiguous (the token provider finds its job)."""
    key = uuid.uuid4().hex
    body = {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": {"name": "slow", "polls": 1, "create_delay_ms": 5_000}},
        "deadlines": {"create_seconds": 120, "result_seconds": 300},
    }
    env = gateway_env(database_url, mock_url, tmp_path / "data", create_answer_seconds=BOUND)
    with gateway_process(env, tmp_path / "gw1.log") as (proc, url):
        r = post_operation(url, key, body)
        assert r is not None and r.status_code == 202, r and r.text
        assert r.json()["state"] == "create_pending"
        op_id = r.json()["operation_id"]
        ends = time.monotonic() + budget(PROCESS_WORK_S)
        while not mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()[
            "jobs_by_reference"
        ]:
            assert time.monotonic() < ends, "the create never reached the mock"
            time.sleep(0.05)
        proc.kill()  # the mock made the job and is still holding its answer
    with gateway_process(env, tmp_path / "gw2.log") as (_, url):
        again = post_operation(url, key, body)
        assert again is not None and again.status_code == 200
        final: dict[str, Any] = httpx2.get(
            f"{url}/v1/operations/{op_id}/wait", params={"timeout": 20}, timeout=30
        ).json()
    assert final["state"] == "succeeded", final
    jobs = mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()
    assert len(jobs["jobs_by_reference"][op_id]) == 1
