"""The connection pool: at most `size` connections, reused newest first, pinged before
use only when they sat idle.

A ping on every checkout (SQLAlchemy's `pool_pre_ping`) cost a round trip and about
0.4 ms of the gateway's CPU per transaction (docs/performance.md). A connection handed back a
moment ago is as alive as the statement it just ran proved, so the ping is only for
one that waited in the pool at least `ping_after` seconds (a restart or an idle
timeout on the server's side closes those). One that fails its ping is closed with
every idle connection older than it, and a new one is opened for the caller. A
connection the server closed under a transaction (`GONE`) is dropped, and so is every
connection opened before it, idle or in use, as they are handed back: when the
server went away, they went with it. One whose state is unknown (`DROP`, a rollback
that failed) or that is still inside a transaction is dropped alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol

Clock = Callable[[], float]


class Connection(Protocol):
    info: dict[str, Any]

    async def ping(self) -> None: ...
    async def close(self) -> None: ...
    async def rollback(self) -> None: ...
    def usable(self) -> bool: ...
    @property
    def in_transaction(self) -> bool: ...


RETURNED_AT = "jobgate_returned_at"  # key in a connection's info: monotonic time
GENERATION = "jobgate_generation"  # key in a connection's info: the pool's at opening
# Keys in a connection's info, set by whoever saw it fail:
DROP = "jobgate_drop"  # its state is unknown (a rollback failed): never reuse it
GONE = "jobgate_gone"  # the server closed it: drop it and every connection older than it


def needs_ping(info: dict[str, Any], now: float, after: float) -> bool:
    """Whether a connection coming out of the pool is pinged first.

    A new connection (never returned) is not: it was just opened.
    """
    returned = info.get(RETURNED_AT)
    return returned is not None and now - returned >= after


class Pool:
    def __init__(
        self,
        opener: Callable[[], Awaitable[Connection]],
        *,
        size: int,
        ping_after: float,
        clock: Clock = time.monotonic,
    ) -> None:
        self._open = opener
        self._slots = asyncio.Semaphore(size)
        self._idle: list[Connection] = []  # newest returned last
        self._ping_after = ping_after
        self._clock = clock
        self._generation = 0
        self.opened = 0  # connections opened, for benches
        self._closed = False

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:  # the opener's own type
        """A connection for one transaction; it goes back to the pool after, or is
        dropped if it broke."""
        await self._slots.acquire()
        try:
            conn = await self._take()
        except BaseException:
            self._slots.release()
            raise
        try:
            yield conn
        finally:
            await self._give_back(conn)
            self._slots.release()

    async def _take(self) -> Connection:
        if self._closed:
            raise RuntimeError("the database was disposed")
        while self._idle:
            conn = self._idle.pop()
            if not conn.usable():  # the server ended it while it sat here (its driver saw)
                await _close(conn)
                continue
            if not needs_ping(conn.info, self._clock(), self._ping_after):
                return conn
            try:
                await conn.ping()
                return conn
            except Exception:
                # It and every connection idle longer than it are dead or soon will be.
                returned = conn.info.get(RETURNED_AT, 0.0)
                older = [c for c in self._idle if c.info.get(RETURNED_AT, 0.0) <= returned]
                self._idle = [c for c in self._idle if c not in older]
                for dead in (conn, *older):
                    await _close(dead)
        conn = await self._open()
        conn.info[GENERATION] = self._generation
        self.opened += 1
        return conn

    async def _give_back(self, conn: Connection) -> None:
        if conn.info.get(GONE) and conn.info.get(GENERATION) == self._generation:
            # It broke (the server went away?): so did every connection opened before
            # it. Idle ones close now, ones in use as they come back.
            self._generation += 1
            idle, self._idle = self._idle, []
            for c in idle:
                await _close(c)
        stale = conn.info.get(GENERATION) != self._generation
        broken = conn.info.get(GONE) or conn.info.get(DROP) or not conn.usable()
        if self._closed or stale or broken or conn.in_transaction:
            await _close(conn)
            return
        conn.info[RETURNED_AT] = self._clock()
        self._idle.append(conn)

    def idle(self) -> list[Any]:  # the opener's own type
        """The connections waiting in the pool now (for counters: see `trips`)."""
        return list(self._idle)

    async def dispose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            await _close(conn)


async def _close(conn: Connection) -> None:
    with contextlib.suppress(Exception):
        await conn.close()
