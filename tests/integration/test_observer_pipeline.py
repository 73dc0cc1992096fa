"""The observer's run() pipeline: no head-of-line blocking, and claims handed back on stop.

Driven as tests/support/observer_loop.py says: a fake clock, held status reads, no sleep.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from app.operations import repository as repo
from tests.support.observer_loop import FIRST_POLL_S, eventually, gateway, start
from tests.support.timing import QUICK_S, budget


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
