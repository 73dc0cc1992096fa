"""Leases and fencing: one owner per remote job; a stale owner cannot overwrite."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2

from app.core.runtime.clock import FakeClock
from app.observer.worker import Observer
from app.operations import repository as repo
from app.operations.driver.runner import process
from app.operations.driver.steps import step
from app.operations.driver.write import apply
from app.operations.repository import Fence
from tests.conftest import Gateway, make_settings
from tests.support.timing import QUICK_S, budget


async def test_a_stale_worker_is_fenced_off(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    await gateway.tick(61)  # observing
    # Worker A claims the operation.
    stale = dataclasses.replace(gateway.ctx, worker_id="stale-A")
    gateway.clock.advance(120)
    async with stale.db.transaction() as session:
        [snapshot] = await repo.claim_due(
            session, now=stale.now(), owner="stale-A", lease_seconds=30, limit=10, skip_locked=False
        )
    # A polls the provider, then pauses before writing (a GC pause, a partition...).
    decision = await step(stale, snapshot, None)
    # Its lease lapses; the successor claims the operation and polls.
    await gateway.tick(31)
    async with gateway.ctx.db.transaction() as session:
        successor = await repo.get(session, op_id)
    assert successor is not None and successor.lease_token == snapshot.lease_token + 1
    # A wakes up and writes what it saw, then tries to carry on: both are refused.
    assert not await apply(stale, snapshot, Fence("stale-A", snapshot.lease_token), decision)
    await process(stale, snapshot, Fence("stale-A", snapshot.lease_token))
    async with gateway.ctx.db.transaction() as session:
        after = await repo.get(session, op_id)
        rows = await repo.history(session, op_id)
    assert after is not None
    assert (after.version, after.next_poll_at, after.lease_token) == (
        successor.version,
        successor.next_poll_at,
        successor.lease_token,
    )
    by_a = [r for r in rows if r.actor == "observer:stale-A"]
    assert {r.kind for r in by_a} <= {"exchange", "fenced"}  # its call is kept as a fact
    assert any(r.kind == "fenced" for r in by_a)
    assert [r for r in rows if r.kind == "observation" and r.actor == "observer:test-observer"]


async def test_only_due_and_unleased_rows_are_claimed(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    engine = gateway.ctx
    async with engine.db.transaction() as session:
        first = await repo.claim_due(
            session, now=engine.now(), owner="x", lease_seconds=30, limit=10, skip_locked=False
        )
    assert first == []  # accepted, first poll not due yet
    gateway.clock.advance(61)
    async with engine.db.transaction() as session:
        claimed = await repo.claim_due(
            session, now=engine.now(), owner="x", lease_seconds=30, limit=10, skip_locked=False
        )
        again = await repo.claim_due(
            session, now=engine.now(), owner="y", lease_seconds=30, limit=10, skip_locked=False
        )
    assert [o.id for o in claimed] == [op_id] and again == []


class HeldStatusReads(httpx2.AsyncBaseTransport):
    """Passes every call to the real mock, but holds status reads until the test releases them.

    The provider call stays in flight for exactly as long as the test needs, with no
    real-clock delay at the mock and no sleep in the test.
    """

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.hold = False
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self.hold and request.method == "GET" and "/jobs/" in request.url.path:
            self.entered.set()
            await self.release.wait()
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_the_lease_is_renewed_while_a_slow_provider_call_is_in_flight(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    """Fake clock: the lease (30 s) lapses on it while the provider's answer is still held."""
    from app.main import create_app

    clock = FakeClock()
    held = HeldStatusReads()
    settings = make_settings(database_url, mock_url, tmp_path, lease_seconds=30.0)
    app = create_app(settings, clock=clock, run_observer=False, transport=held)
    async with app.router.lifespan_context(app):
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1"
        ) as http:
            body = {"provider": "mock", "kind": "report", "input": {"scenario": {"name": "slow"}}}
            r = await http.post(
                "/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
            )
            assert r.json()["state"] == "accepted"
            op_id = r.json()["operation_id"]
            clock.advance(61)  # the first poll is due
            held.hold = True
            first = asyncio.create_task(app.state.observer.run(until_idle=True))
            await asyncio.wait_for(held.entered.wait(), budget(QUICK_S))  # the read is in flight
            claimed_until = await _lease_expiry(app, op_id)
            clock.advance(31)  # past the claimed lease: only a heartbeat keeps it
            assert clock.now() > claimed_until

            async def renewed() -> bool:
                return await _lease_expiry(app, op_id) > clock.now()

            await _eventually(renewed, "the heartbeat renewed the lease while the call waited")
            rival = Observer(dataclasses.replace(app.state.ctx, worker_id="rival"))
            assert await rival.run(until_idle=True) == 0
            held.release.set()
            # The held step, then whatever fell due after it (the loop runs until idle).
            assert await asyncio.wait_for(first, budget(QUICK_S)) >= 1


async def _lease_expiry(app: Any, op_id: str) -> datetime:
    async with app.state.ctx.db.transaction() as session:
        op = await repo.get(session, op_id)
    assert op is not None and op.lease_expires_at is not None
    return op.lease_expires_at


async def _eventually(pred: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait for work already set in motion (no clock involved), within the scaled budget."""
    ends = time.monotonic() + budget(QUICK_S)
    while not await pred():
        if time.monotonic() > ends:
            raise AssertionError(f"never happened: {what}")
        await asyncio.sleep(0.005)  # yield to the step's tasks; a poll, not a timing assumption


async def test_a_fenced_write_naming_no_column_is_refused_and_writes_nothing(
    gateway: Gateway,
) -> None:
    """The prebuilt UPDATE takes its SET columns from the values; one that is no column
    would be left out silently, so it is refused before anything is sent."""
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    async with gateway.ctx.db.transaction() as session:
        before = await repo.get(session, op_id)
    assert before is not None
    fence = Fence(before.lease_owner or "nobody", before.lease_token)
    async with gateway.ctx.db.transaction() as session:
        try:
            await repo.fenced_update(
                session, op_id, fence=fence, at=gateway.ctx.now(), fields={"next_pol_at": None}
            )
        except ValueError as err:
            assert "next_pol_at" in str(err)
        else:
            raise AssertionError("a misspelt column was accepted")
    async with gateway.ctx.db.transaction() as session:
        after = await repo.get(session, op_id)
    assert after is not None and after.updated_at == before.updated_at
