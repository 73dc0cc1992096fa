"""Step writes that arrive together share one transaction (app/core/db/group_commit.py):
each piece commits with the others or not at all, one that raises is undone alone, and a
failed COMMIT fails every piece. On both back-ends, with real rows."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from sqlalchemy import func, insert, select

from app.core.db.database import Database
from app.core.db.group_commit import GroupCommit
from app.core.db.row_table import table_of
from app.core.db.txn import Txn
from app.webhooks.models import WebhookEvent

EVENTS = table_of(WebhookEvent)


def _row(event_id: str) -> dict[str, object]:
    from datetime import UTC, datetime

    return {"provider": "mock", "event_id": event_id, "received_at": datetime.now(UTC)}


async def _count(db: Database) -> int:
    async with db.read() as txn:
        return int((await txn.execute(select(func.count()).select_from(EVENTS))).scalar_one())


def _insert(event_id: str, *, fail: bool = False):  # type: ignore[no-untyped-def]
    async def work(txn: Txn) -> str:
        await txn.execute(insert(EVENTS).values(**_row(event_id)))
        if fail:
            raise ValueError(f"piece {event_id} failed")
        return event_id

    return work


async def test_pieces_arriving_together_share_one_transaction(database_url: str) -> None:
    db = Database(database_url)
    group = GroupCommit(db)
    try:
        ids = [uuid.uuid4().hex for _ in range(20)]
        results = await asyncio.gather(*(group.run(_insert(i)) for i in ids))
        assert results == ids
        assert await _count(db) == 20
        assert group.pieces == 20 and group.groups < 20  # the first alone, the rest together
    finally:
        await db.dispose()


async def test_a_piece_that_raises_is_undone_alone(database_url: str) -> None:
    db = Database(database_url)
    group = GroupCommit(db)
    try:
        pieces = [group.run(_insert(uuid.uuid4().hex, fail=(n == 3))) for n in range(6)]
        results = await asyncio.gather(*pieces, return_exceptions=True)
        failed = [r for r in results if isinstance(r, ValueError)]
        assert len(failed) == 1 and await _count(db) == 5
    finally:
        await db.dispose()


class CommitFails:
    """The real database, whose COMMIT fails once (raised as the transaction ends)."""

    def __init__(self, real: Database) -> None:
        self.real = real

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Txn]:
        async with self.real.transaction() as txn:
            yield txn
            raise ConnectionResetError("the connection dropped at COMMIT")


async def test_a_failed_commit_fails_every_piece(database_url: str) -> None:
    db = Database(database_url)
    group = GroupCommit(CommitFails(db))  # type: ignore[arg-type]
    try:
        ids = [uuid.uuid4().hex for _ in range(5)]
        results = await asyncio.gather(
            *(group.run(_insert(i)) for i in ids), return_exceptions=True
        )
        assert all(isinstance(r, ConnectionResetError) for r in results), results
        assert await _count(db) == 0  # rolled back, all of it
    finally:
        await db.dispose()


@pytest.mark.parametrize("max_group", [1])
async def test_groups_off_writes_each_alone(database_url: str, max_group: int) -> None:
    db = Database(database_url)
    group = GroupCommit(db, max_group=max_group)
    try:
        await asyncio.gather(*(group.run(_insert(uuid.uuid4().hex)) for _ in range(5)))
        assert await _count(db) == 5 and group.groups == 0  # never queued
    finally:
        await db.dispose()
