"""The observer's run() pipeline: no head-of-line blocking, and claims handed back on stop.

A fake clock decides what is due; a transport in front of the real mock holds the
status reads of chosen jobs until the test releases them, so a provider call stays in
flight for exactly as long as a test needs, with no sleep anywhere.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from app.core.clock import FakeClock
from app.operations import repository as repo
from tests.conftest import make_settings
from tests.support.timing import QUICK_S, budget

FIRST_POLL_S = 61  # the mock profile's first poll is due 60 s after acceptance


class HeldJobs(httpx.AsyncBaseTransport):
    """Passes every call to the real mock; holds status reads of the jobs in `held`."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.held: set[str] = set()
        self.entered: set[str] = set()
        self.release = asyncio.Event()
        self.seen = asyncio.Event()  # set whenever a held read arrives

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        job = request.url.path.rsplit("/", 1)[-1]
        if request.method == "GET" and job in self.held:
            self.entered.add(job)
            self.seen.set()
            await self.release.wait()
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def gateway(database_url: str, mock_url: str, tmp_path: Path) -> AsyncIterator[Any]:
    from app.main import create_app

    # A lease far longer than any test: only the pipeline decides who runs what.
    settings = make_settings(database_url, mock_url, tmp_path, lease_seconds=3600.0)
    held = HeldJobs()
    app = create_app(settings, clock=FakeClock(), run_observer=False, transport=held)
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://gateway"
        ) as http:
            app.state.http, app.state.held = http, held
            yield app


async def start(app: Any) -> dict[str, Any]:
    body = {"provider": "mock", "kind": "report", "input": {"scenario": {"name": "slow"}}}
    r = await app.state.http.post(
        "/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
    )
    assert r.status_code == 202 and r.json()["state"] == "accepted", r.text
    return dict(r.json())


async def eventually(pred: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait for work already set in motion (no clock involved), within the scaled budget."""
    ends = time.monotonic() + budget(QUICK_S)
    while not await pred():
        if time.monotonic() > ends:
            raise AssertionError(f"never happened: {what}")
        await asyncio.sleep(0.005)  # yield to the observer's tasks


async def polled(app: Any, op_id: str) -> bool:
    r = await app.state.http.get(f"/v1/operations/{op_id}/history")
    return any(item["kind"] == "observation" for item in r.json()["items"])


async def test_work_that_falls_due_mid_step_does_not_wait_for_a_held_call(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    """With batch ticks, B would wait until A's held status read came back."""
    async with gateway(database_url, mock_url, tmp_path) as app:
        clock, held, observer = app.state.ctx.clock, app.state.held, app.state.observer
        a = await start(app)
        held.held.add(a["remote_job_id"])
        clock.advance(FIRST_POLL_S)
        running = asyncio.create_task(observer.run())
        try:
            await asyncio.wait_for(held.seen.wait(), budget(QUICK_S))  # A's read is in flight
            b = await start(app)
            clock.advance(FIRST_POLL_S)  # B falls due while A's step is still running
            app.state.ctx.notifier.kick()
            await eventually(lambda: polled(app, b["operation_id"]), "B polled while A held")
            assert not await polled(app, a["operation_id"])  # A is still in its step
        finally:
            held.release.set()
            observer.stop()
            await asyncio.wait_for(running, budget(QUICK_S))
        assert await polled(app, a["operation_id"])


async def test_stop_hands_back_claimed_operations_that_never_started(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    async with gateway(database_url, mock_url, tmp_path) as app:
        clock, held, observer = app.state.ctx.clock, app.state.held, app.state.observer
        ops = [await start(app) for _ in range(observer.slots + 2)]
        held.held.update(op["remote_job_id"] for op in ops)
        clock.advance(FIRST_POLL_S)
        running = asyncio.create_task(observer.run())

        async def all_slots_busy() -> bool:
            return len(held.entered) == observer.slots

        try:
            await eventually(all_slots_busy, "every slot holds a status read")
            observer.stop()

            async def handed_back() -> list[str]:
                async with app.state.ctx.db.read() as session:
                    rows = [await repo.get(session, op["operation_id"]) for op in ops]
                return [r.id for r in rows if r is not None and r.lease_owner is None]

            async def two_free() -> bool:
                return len(await handed_back()) == 2

            await eventually(two_free, "the two unstarted claims were handed back")
            free = await handed_back()
            started = {op["operation_id"] for op in ops if op["remote_job_id"] in held.entered}
            assert not set(free) & started  # only claims never worked under
            async with app.state.ctx.db.read() as session:
                for op_id in free:
                    row = await repo.get(session, op_id)
                    assert row is not None and row.next_poll_at is not None
                    assert row.next_poll_at <= clock.now()  # due again at once
            assert not running.done()  # the started ones are still finishing their steps
        finally:
            held.release.set()
            await asyncio.wait_for(running, budget(QUICK_S))
