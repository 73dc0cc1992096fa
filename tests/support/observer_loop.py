"""An in-process gateway whose observer loop (`run()`) a test starts and stops itself.

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

import httpx2

from app.core.runtime.clock import FakeClock
from tests.conftest import make_settings
from tests.support.timing import QUICK_S, budget

FIRST_POLL_S = 61  # the mock profile's first poll is due 60 s after acceptance


class HeldJobs(httpx2.AsyncBaseTransport):
    """Passes every call to the real mock; holds status reads of the jobs in `held`."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.held: set[str] = set()
        self.entered: set[str] = set()
        self.release = asyncio.Event()
        self.seen = asyncio.Event()  # set whenever a held read arrives

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        job = request.url.path.rsplit("/", 1)[-1]
        if request.method == "GET" and job in self.held:
            self.entered.add(job)
            self.seen.set()
            await self.release.wait()
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def gateway(
    database_url: str, mock_url: str, tmp_path: Path, **settings_kw: Any
) -> AsyncIterator[Any]:
    from app.main import create_app

    # A lease far longer than any test: only the pipeline decides who runs what.
    kw: dict[str, Any] = {"lease_seconds": 3600.0, **settings_kw}
    settings = make_settings(database_url, mock_url, tmp_path, **kw)
    held = HeldJobs()
    app = create_app(settings, clock=FakeClock(), run_observer=False, transport=held)
    async with app.router.lifespan_context(app):
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1"
        ) as http:
            app.state.http, app.state.held = http, held
            yield app


async def start(app: Any, scenario: dict[str, Any] | None = None) -> dict[str, Any]:
    scenario = scenario or {"name": "slow"}
    body = {"provider": "mock", "kind": "report", "input": {"scenario": scenario}}
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


@asynccontextmanager
async def observer_running(app: Any) -> AsyncIterator[Any]:
    """The observer's real `run()` loop for the block; stopped and waited for however
    the block ends. Yields the observer."""
    observer = app.state.observer
    running = asyncio.create_task(observer.run())
    try:
        yield observer
    finally:
        observer.stop()
        await asyncio.wait_for(running, budget(QUICK_S))
