"""A provider's answer kept through a database outage is retried only while the lease
holds, and only for database faults (app/operations/driver/kept_answers.py); the real
outage is tests/integration/test_answer_kept.py."""

from __future__ import annotations

import asyncio
import errno
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from app.core.runtime.clock import FakeClock
from app.operations.driver import kept_answers


def _ctx_and_op(lease_seconds: float) -> tuple[Any, Any]:
    clock = FakeClock()
    ctx = SimpleNamespace(clock=clock, now=clock.now)
    op = SimpleNamespace(id="op_1", lease_expires_at=clock.now() + timedelta(seconds=lease_seconds))
    return ctx, op


def _gone() -> OSError:
    return ConnectionRefusedError(errno.ECONNREFUSED, "connection refused")


async def _drive(clock: FakeClock, task: asyncio.Task[Any]) -> None:
    for _ in range(1000):
        if task.done():
            return
        await asyncio.sleep(0)
        clock.advance(0.25)


async def test_the_write_is_retried_until_the_database_answers() -> None:
    ctx, op = _ctx_and_op(30.0)
    calls = 0

    async def write() -> bool:
        nonlocal calls
        calls += 1
        if calls < 4:
            raise _gone()
        return True

    task = asyncio.ensure_future(kept_answers.write_kept(ctx, op, write, answered=True))
    await _drive(ctx.clock, task)
    assert task.result() is True and calls == 4 and kept_answers.waiting() == 0


async def test_it_is_dropped_before_the_lease_would_lapse() -> None:
    ctx, op = _ctx_and_op(3.0)

    async def write() -> bool:
        raise _gone()

    task = asyncio.ensure_future(kept_answers.write_kept(ctx, op, write, answered=True))
    await _drive(ctx.clock, task)
    with pytest.raises(ConnectionRefusedError):
        task.result()
    assert ctx.clock.now() <= op.lease_expires_at and kept_answers.waiting() == 0


async def test_nothing_is_kept_without_an_answer_or_for_another_fault() -> None:
    ctx, op = _ctx_and_op(30.0)

    async def gone() -> bool:
        raise _gone()

    async def bug() -> bool:
        raise ValueError("a bug")

    with pytest.raises(ConnectionRefusedError):
        await kept_answers.write_kept(ctx, op, gone, answered=False)
    with pytest.raises(ValueError):
        await kept_answers.write_kept(ctx, op, bug, answered=True)
