"""A step's write is kept through a database outage (`write.apply`, the one path every
step's write takes): retried while the lease holds, only for a decision that carries a
provider's answer, and only for database faults. The real outage, cut through a TCP
proxy, is tests/integration/test_answer_kept.py."""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from app.core.db.database import Database
from app.core.db.txn import Txn
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.driver.decision import Decision
from app.operations.driver.write import apply
from app.operations.repository import Fence
from app.providers.calls.types import Exchange
from tests.conftest import Gateway
from tests.support.timing import QUICK_S, budget


class FlakyDatabase:
    """The real database, whose next `failures` transactions fail before they begin."""

    def __init__(self, real: Database, failures: int, error: Exception) -> None:
        self.real, self.failures, self.error, self.tries = real, failures, error, 0

    @asynccontextmanager
    async def transaction(self, **kw: Any) -> AsyncIterator[Txn]:
        self.tries += 1
        if self.failures:
            self.failures -= 1
            raise self.error
        async with self.real.transaction(**kw) as txn:
            yield txn


def _gone() -> OSError:
    return ConnectionRefusedError(errno.ECONNREFUSED, "connection refused")


EXCHANGE = Exchange("status", "GET", "http://127.0.0.1/v1/jobs/j", 200, {}, None, {}, "{}", 1.0)


async def _claimed(gateway: Gateway) -> tuple[Operation, Fence]:
    await gateway.start({"name": "never_finishes"})
    gateway.clock.advance(61)
    async with gateway.ctx.db.transaction() as txn:
        [op] = await repo.claim_due(
            txn, now=gateway.ctx.now(), owner="kept", lease_seconds=30, limit=1, skip_locked=False
        )
    return op, Fence("kept", op.lease_token)


def _decision(*, answered: bool) -> Decision:
    return Decision(
        None, "still running", delay=5.0, exchanges=[EXCHANGE] if answered else [],
        observation={"remote_state": "running"},
    )  # fmt: skip


async def _drive(ctx: AppContext, clock: Any, task: asyncio.Task[Any]) -> None:
    """Let the retries run on the fake clock (a quarter second a turn) until the task ends;
    the writes themselves are real, so each turn also waits a little real time for them."""
    ends = time.monotonic() + budget(QUICK_S)
    while not task.done() and time.monotonic() < ends:
        await asyncio.sleep(0.005)
        clock.advance(0.25)


async def _observations(gateway: Gateway, op_id: str) -> int:
    async with gateway.ctx.db.read() as txn:
        rows = await repo.history(txn, op_id)
    return sum(1 for r in rows if r.kind == "observation")


async def test_the_write_is_retried_until_the_database_answers(gateway: Gateway) -> None:
    op, fence = await _claimed(gateway)
    flaky = FlakyDatabase(gateway.ctx.db, 3, _gone())
    ctx = dataclasses.replace(gateway.ctx, db=flaky)  # type: ignore[arg-type]
    task = asyncio.ensure_future(apply(ctx, op, fence, _decision(answered=True)))
    await _drive(ctx, gateway.clock, task)
    assert task.result() is True and flaky.tries == 4 and ctx.answers_waiting == 0
    assert await _observations(gateway, op.id) == 1  # written once, when it came back


async def test_it_is_dropped_before_the_lease_would_lapse(gateway: Gateway) -> None:
    op, fence = await _claimed(gateway)
    ctx = dataclasses.replace(gateway.ctx, db=FlakyDatabase(gateway.ctx.db, 10**6, _gone()))  # type: ignore[arg-type]
    task = asyncio.ensure_future(apply(ctx, op, fence, _decision(answered=True)))
    await _drive(ctx, gateway.clock, task)
    with pytest.raises(ConnectionRefusedError):
        task.result()
    assert op.lease_expires_at is not None and ctx.now() <= op.lease_expires_at
    assert ctx.answers_waiting == 0 and await _observations(gateway, op.id) == 0


async def test_nothing_is_kept_without_an_answer_or_for_another_fault(gateway: Gateway) -> None:
    op, fence = await _claimed(gateway)
    gone = FlakyDatabase(gateway.ctx.db, 1, _gone())
    with pytest.raises(ConnectionRefusedError):
        await apply(dataclasses.replace(gateway.ctx, db=gone), op, fence, _decision(answered=False))  # type: ignore[arg-type]
    bug = FlakyDatabase(gateway.ctx.db, 1, ValueError("a bug"))
    with pytest.raises(ValueError):
        await apply(dataclasses.replace(gateway.ctx, db=bug), op, fence, _decision(answered=True))  # type: ignore[arg-type]
    assert gone.tries == 1 and bug.tries == 1  # raised at once, never retried


async def test_a_full_process_keeps_no_more(gateway: Gateway) -> None:
    from app.operations.driver.write import MAX_KEPT

    op, fence = await _claimed(gateway)
    flaky = FlakyDatabase(gateway.ctx.db, 1, _gone())
    ctx = dataclasses.replace(gateway.ctx, db=flaky, answers_waiting=MAX_KEPT)  # type: ignore[arg-type]
    with pytest.raises(ConnectionRefusedError):
        await apply(ctx, op, fence, _decision(answered=True))
    assert flaky.tries == 1
