"""PostgreSQL LISTEN/NOTIFY: wake local waiters when another process changes an operation.

On asyncpg, the driver transactions run on (`Connection.add_listener`): one
PostgreSQL driver at run time (Alembic keeps its own)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

from app.core.db.database import is_sqlite
from app.core.db.drivers.pg_conn import CONNECT_TIMEOUT_S, dsn
from app.core.runtime.notify import Notifier

log = logging.getLogger(__name__)

# Payload: the operation id, then " open" when the change left it certainly not done,
# then, when the change handed it back to the queue, the Unix time it falls due (so an
# observer in another process claims it then, not at its next interval), then "v<N>" for
# a transition, the version it wrote; sent in the same transaction as the change.
CHANNEL = "jobgate_ops"
RECONNECT_SECONDS = 2.0
PING_SECONDS = 10.0  # a connection that died silently is found within this


def relay(payload: str, notifier: Notifier) -> None:
    """One notification to the in-process notifier (see the payload's form above)."""
    op_id, *rest = payload.split(" ")
    version = next((int(t[1:]) for t in rest if t[:1] == "v" and t[1:].isdigit()), None)
    notifier.publish(op_id, done=False if "open" in rest else None)
    notifier.changed(op_id, version)
    for token in rest:
        if token != "open" and token[:1] != "v":
            with contextlib.suppress(ValueError, OverflowError):
                notifier.due(datetime.fromtimestamp(float(token), UTC))


async def listen_forever(database_url: str, notifier: Notifier) -> None:
    """Relay notifications to the in-process notifier; reconnects after errors."""
    import asyncpg

    def on_note(_conn: object, _pid: int, _channel: str, payload: str) -> None:
        relay(payload, notifier)

    while True:
        try:
            conn = await asyncpg.connect(dsn(database_url), timeout=CONNECT_TIMEOUT_S)
            try:
                lost = asyncio.Event()
                conn.add_termination_listener(lambda _conn, lost=lost: lost.set())
                await conn.add_listener(CHANNEL, on_note)
                while not lost.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(lost.wait(), PING_SECONDS)
                    if not lost.is_set():
                        await conn.fetchval("SELECT 1")
                raise ConnectionError("the LISTEN connection was closed")
            finally:
                conn.terminate()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the database restarting must not kill the gateway
            log.warning("LISTEN connection lost (%s); reconnecting", type(exc).__name__)
            await asyncio.sleep(RECONNECT_SECONDS)


@asynccontextmanager
async def listening(database_url: str, notifier: Notifier) -> AsyncIterator[None]:
    """`listen_forever` for as long as the block runs, on PostgreSQL (SQLite: nothing;
    one process owns its file)."""
    if is_sqlite(database_url):
        yield
        return
    task = asyncio.create_task(listen_forever(database_url, notifier))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
