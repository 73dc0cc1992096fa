"""When a pooled connection is pinged before use (app/core/db/drivers/conn_pool.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.core.db.drivers.conn_pool import DROP, GONE, RETURNED_AT, Pool, needs_ping


def test_a_new_connection_is_not_pinged() -> None:
    assert not needs_ping({}, now=100.0, after=0.0)


def test_a_connection_is_pinged_once_idle_for_the_limit() -> None:
    info = {RETURNED_AT: 10.0}
    assert not needs_ping(info, now=10.9, after=1.0)
    assert needs_ping(info, now=11.0, after=1.0)


def test_a_limit_of_zero_pings_every_reuse() -> None:
    assert needs_ping({RETURNED_AT: 10.0}, now=10.0, after=0.0)


class Fake:
    """A driver connection that records its pings and whether it was closed."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.info: dict[str, Any] = {}
        self.pings = 0
        self.closed = False
        self.dead = False
        self.in_transaction = False

    async def ping(self) -> None:
        self.pings += 1
        if self.dead:
            raise ConnectionError("server closed the connection")

    async def close(self) -> None:
        self.closed = True

    async def rollback(self) -> None:
        self.in_transaction = False

    def usable(self) -> bool:
        return not self.closed


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def pool(size: int = 3, after: float = 1.0) -> tuple[Pool, list[Fake], Clock]:
    made: list[Fake] = []
    clock = Clock()

    async def opener() -> Fake:
        made.append(Fake(len(made)))
        return made[-1]

    return Pool(opener, size=size, ping_after=after, clock=clock), made, clock


async def test_the_newest_idle_connection_is_reused_without_a_ping() -> None:
    p, made, _ = pool()
    async with p.connection() as a, p.connection() as b:
        assert (a.n, b.n) == (0, 1)
    async with p.connection() as c:  # b went back last
        assert c is made[0] and c.pings == 0
    assert len(made) == 2


async def test_a_connection_idle_too_long_is_pinged_and_replaced_with_the_older_ones() -> None:
    p, made, clock = pool()
    async with p.connection(), p.connection(), p.connection():
        pass  # three idle; 0 returned last (the newest)
    clock.t += 5
    for conn in made:
        conn.dead = True  # the server restarted meanwhile
    async with p.connection() as fresh:
        assert fresh.n == 3  # a new one, not a dead one
    # One ping: the older ones are closed with the one that failed, unpinged.
    assert [c.pings for c in made[:3]] == [1, 0, 0] and all(c.closed for c in made[:3])


@pytest.mark.parametrize(
    ("flag", "older_dropped"),
    [(GONE, True), (DROP, False)],  # the server went away / its rollback failed
)
async def test_a_connection_that_broke_is_dropped_with_the_older_ones_if_the_server_went(
    flag: str, older_dropped: bool
) -> None:
    p, made, _ = pool()
    async with p.connection():
        pass  # made[0] idle
    async with p.connection() as a, p.connection() as b:
        assert (a.n, b.n) == (0, 1)
        b.info[flag] = True
    assert made[1].closed and made[0].closed is older_dropped  # a came back after b
    async with p.connection() as c:
        assert c.n == (2 if older_dropped else 0)


async def test_a_connection_handed_back_inside_a_transaction_is_never_reused() -> None:
    p, made, _ = pool()
    async with p.connection() as a:
        a.in_transaction = True  # its rollback could not run (cancelled)
    assert made[0].closed
    async with p.connection() as b:
        assert b.n == 1


async def test_at_most_size_connections_are_open_at_once() -> None:
    p, made, _ = pool(size=2)
    got: list[int] = []

    async def use(hold: asyncio.Event) -> None:
        async with p.connection() as c:
            got.append(c.n)
            await hold.wait()

    first, second = asyncio.Event(), asyncio.Event()
    tasks = [asyncio.create_task(use(first)), asyncio.create_task(use(second))]
    third = asyncio.create_task(use(asyncio.Event()))
    for _ in range(5):
        await asyncio.sleep(0)
    assert sorted(got) == [0, 1]  # the third waits for a slot
    first.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert got[-1] == 0 and len(made) == 2  # it got the one handed back
    second.set()
    third.cancel()
    await asyncio.gather(*tasks, third, return_exceptions=True)
