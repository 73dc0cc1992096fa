"""Polls due soon are held under the lease (app/operations/hold.py), never at a guarantee's cost.

Driven as tests/support/observer_loop.py says: a fake clock decides what is due, the
observer's real `run()` loop does the work against the real mock, no sleep anywhere.
The lease token is the witness: every claim bumps it, a held poll keeps it.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from app.operations import repository as repo
from app.operations.domain.operation import Operation
from tests.support.observer_loop import (
    FIRST_POLL_S,
    eventually,
    gateway,
    observer_running,
    start,
)

HOLD_S = 5.0  # the default JOBGATE_OBSERVER_HOLD_SECONDS
# Three "running" answers, each asking for the next poll in 1 s (within the hold; without
# the hint, backoff with full jitter could draw a delay beyond it).
SLOW = {"name": "slow", "polls": 3, "poll_after": 1}


def advance(app: Any, seconds: float) -> None:
    """Move the fake clock and wake the loop, which sleeps in real time otherwise (a fake
    hour passes in a few real seconds here: held leases would lapse while it slept)."""
    app.state.ctx.clock.advance(seconds)
    app.state.ctx.notifier.kick()


async def row(app: Any, op_id: str) -> Operation:
    async with app.state.ctx.db.read() as session:
        op = await repo.get(session, op_id)
    assert op is not None
    return op


async def observations(app: Any, op_id: str) -> int:
    r = await app.state.http.get(f"/v1/operations/{op_id}/history")
    return sum(1 for item in r.json()["items"] if item["kind"] == "observation")


async def first_poll_made(app: Any, op_id: str) -> Operation:
    """Advance to the first poll (claimed: 60 s away is beyond the hold) and wait for it."""
    advance(app, FIRST_POLL_S)

    async def held() -> bool:
        op = await row(app, op_id)
        return await observations(app, op_id) == 1 and op.lease_owner is not None

    await eventually(held, "the first poll made and the next one held")
    return await row(app, op_id)


async def cancel_while_held(app: Any, op_id: str) -> None:
    """The first poll made, the next one held; then an agent asks to cancel."""
    await first_poll_made(app, op_id)
    r = await app.state.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "not needed"})
    assert r.status_code == 202, r.text


async def test_polls_due_soon_are_held_under_one_lease_until_done(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    async with gateway(database_url, mock_url, tmp_path) as app:
        clock = app.state.ctx.clock
        op_id = (await start(app, SLOW))["operation_id"]
        async with observer_running(app):
            held = await first_poll_made(app, op_id)
            # The row says who holds it and when it polls next; its lease outlives that.
            assert held.lease_owner == app.state.ctx.worker_id
            assert held.next_poll_at is not None and held.lease_expires_at is not None
            assert clock.now() < held.next_poll_at <= clock.now() + timedelta(seconds=HOLD_S)
            assert held.lease_expires_at > held.next_poll_at

            async def done() -> bool:
                advance(app, HOLD_S)  # every held poll falls due; nothing else does
                return (await row(app, op_id)).state == "succeeded"

            await eventually(done, "the held polls made and the result collected")
            final = await row(app, op_id)
            assert final.lease_token == held.lease_token  # no claim after the first
            assert final.lease_owner is None  # done: the lease is let go
            history = (await app.state.http.get(f"/v1/operations/{op_id}/history")).json()
            kinds = [(i["kind"], i["cause"]) for i in history["items"]]
            assert await observations(app, op_id) == 3, kinds  # every poll still in history


async def test_with_holding_off_every_poll_is_claimed(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    async with gateway(database_url, mock_url, tmp_path, observer_hold_seconds=0) as app:
        op_id = (await start(app, SLOW))["operation_id"]
        async with observer_running(app):
            advance(app, FIRST_POLL_S)
            await eventually(lambda: _polled(app, op_id, 1), "the first poll")
            first = await row(app, op_id)
            assert first.lease_owner is None  # handed back to the queue
            advance(app, HOLD_S)
            await eventually(lambda: _polled(app, op_id, 2), "the second poll")
            assert (await row(app, op_id)).lease_token > first.lease_token  # claimed again


async def test_a_cancel_asked_while_held_is_acted_on_at_the_next_step(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    """The holder's copy of the row is stale after the cancel intent: it must notice."""
    async with gateway(database_url, mock_url, tmp_path) as app:
        http = app.state.http
        op_id = (await start(app, SLOW))["operation_id"]
        async with observer_running(app):
            await cancel_while_held(app, op_id)

            async def cancelled() -> bool:
                advance(app, HOLD_S)
                return (await row(app, op_id)).state == "cancelled"

            await eventually(cancelled, "the held operation cancelled")
            history = (await http.get(f"/v1/operations/{op_id}/history")).json()["items"]
            sent = [i for i in history if i["kind"] == "exchange" and "cancel" in i["cause"]]
            assert sent, history  # the cancel reached the provider
            assert await observations(app, op_id) == 1  # no status read in between


async def test_stop_hands_back_a_held_operation_due_at_its_own_time(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    async with gateway(database_url, mock_url, tmp_path) as app:
        op_id = (await start(app, SLOW))["operation_id"]
        async with observer_running(app):
            held = await first_poll_made(app, op_id)
        back = await row(app, op_id)
        assert back.lease_owner is None and back.lease_expires_at is None
        assert back.next_poll_at == held.next_poll_at  # due when the held poll was
        assert back.lease_token == held.lease_token


async def _polled(app: Any, op_id: str, n: int) -> bool:
    return await observations(app, op_id) >= n


async def test_a_cancel_wakes_the_held_operation_at_once(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    """No clock moves after the cancel: only the wake can make the held step run now."""
    async with gateway(database_url, mock_url, tmp_path) as app:
        http = app.state.http
        op_id = (await start(app, SLOW))["operation_id"]
        async with observer_running(app):
            await cancel_while_held(app, op_id)

            async def cancel_sent() -> bool:
                r = await http.get(f"/v1/operations/{op_id}/history")
                return any(
                    i["kind"] == "exchange" and i["cause"].startswith("cancel")
                    for i in r.json()["items"]
                )

            await eventually(cancel_sent, "the cancel sent before the held poll was due")
