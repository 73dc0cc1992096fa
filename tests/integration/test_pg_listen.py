"""LISTEN on asyncpg (app/core/db/drivers/pg_listen.py): a NOTIFY sent on another connection reaches
the in-process notifier, and the listener comes back after its connection is killed."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import asyncpg
import pytest

from app.core.db.drivers import pg_listen
from app.core.db.drivers.pg_conn import dsn
from app.core.runtime.notify import Notifier
from tests.support.timing import QUICK_S, budget

DUE = datetime(2026, 12, 2, 18, 0, 0, 250000, tzinfo=UTC)


async def notified(conn: asyncpg.Connection, seen: list[datetime]) -> None:
    """NOTIFY until the listener has relayed one (it subscribes asynchronously)."""
    payload = f"op_1 open {DUE.timestamp():.6f}"
    async with asyncio.timeout(budget(QUICK_S)):
        while not seen:
            await conn.execute("SELECT pg_notify($1, $2)", pg_listen.CHANNEL, payload)
            await asyncio.sleep(0.02)


@pytest.mark.postgres_only
async def test_a_notify_reaches_the_notifier_and_the_listener_reconnects(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_listen, "RECONNECT_SECONDS", 0.01)
    notifier = Notifier()
    seen: list[datetime] = []
    notifier.on_due = seen.append
    conn = await asyncpg.connect(dsn(database_url))
    try:
        async with pg_listen.listening(database_url, notifier):
            await notified(conn, seen)
            assert seen[0] == DUE
            killed = await conn.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                " AND query LIKE 'LISTEN%'"
            )
            assert killed == 1
            seen.clear()
            await notified(conn, seen)  # a new LISTEN connection relays again
            assert seen[0] == DUE
    finally:
        await conn.close()
