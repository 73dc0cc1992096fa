"""Group commit: writes that arrive while another is being written share its next
transaction.

An observer steps many operations at once, and each step ends in one small write. Alone,
each is a transaction of its own: a BEGIN and a COMMIT (on PostgreSQL each a round trip
and the COMMIT a WAL flush), and the audit trail's append, which every writer takes in
turn on the chain's one head. `GroupCommit.run(work)` queues `work`; one writer at a time
takes everything queued and runs it in one transaction, each piece inside a savepoint
when there are several (so one that raises is undone alone and gets its own exception,
the others commit), then commits once: the audit trail appends every piece's entries in
one statement. With nothing else queued a write goes at once, as before; under load the
cost per write falls as the queue grows (docs/performance.md).

A piece sees the transaction as its own: what it writes commits with the others or not
at all; its `on_commit` callbacks run after the shared COMMIT; a COMMIT that fails fails
every piece with that error (each may be tried again, alone or in the next group).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from app.core.db.database import Database
from app.core.db.txn import Txn

log = logging.getLogger(__name__)

T = TypeVar("T")
Work = Callable[[Txn], Awaitable[Any]]

MAX_GROUP = 64  # pieces in one transaction: bounds its locks and its length


class GroupCommit:
    """One queue of writes per database, written a group at a time."""

    def __init__(self, db: Database, *, max_group: int = MAX_GROUP) -> None:
        self.db = db
        self.max_group = max_group
        self._queue: list[tuple[Work, asyncio.Future[Any]]] = []
        self._writer: asyncio.Task[None] | None = None
        self.groups = 0  # transactions written (benches, tests)
        self.pieces = 0  # pieces written in them

    async def run(self, work: Callable[[Txn], Awaitable[T]]) -> T:
        """`work(txn)` in the next group's transaction; its result once that commits."""
        if self.max_group <= 1:  # groups off: every piece its own transaction, at once
            async with self.db.transaction() as txn:
                return await work(txn)
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append((work, future))
        if self._writer is None or self._writer.done():
            # Its own context: what a caller bound (the operation its log lines name) is
            # not the group's, and it holds no transaction of any caller.
            self._writer = asyncio.create_task(
                self._drain(), name="group commit", context=contextvars.Context()
            )
        return await future

    async def _drain(self) -> None:
        while self._queue:
            group, self._queue = self._queue[: self.max_group], self._queue[self.max_group :]
            await self._write(group)

    async def _write(self, group: list[tuple[Work, asyncio.Future[Any]]]) -> None:
        outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        try:
            async with self.db.transaction() as txn:
                if len(group) == 1:
                    work, future = group[0]
                    outcomes.append((future, await work(txn), None))
                else:
                    for work, future in group:
                        try:
                            async with txn.begin_nested():
                                outcomes.append((future, await work(txn), None))
                        except Exception as exc:  # undone alone; the others go on
                            outcomes.append((future, None, exc))
        except Exception as exc:  # BEGIN or COMMIT failed (or the one piece raised)
            for _, future in group:
                if not future.done():
                    future.set_exception(exc)
            return
        except BaseException:  # cancelled (shutdown): the group rolled back
            for _, future in group:
                future.cancel()
            raise
        self.groups += 1
        self.pieces += len(group)
        for future, value, error in outcomes:
            if future.done():  # its caller is gone (cancelled): nothing to tell
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)

    async def close(self) -> None:
        """Wait for what is queued to be written (at shutdown)."""
        if self._writer is not None:
            with contextlib.suppress(Exception):
                await self._writer
