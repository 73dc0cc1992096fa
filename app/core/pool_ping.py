"""Ping a pooled PostgreSQL connection before use only when it has sat idle.

SQLAlchemy's `pool_pre_ping` sends `SELECT 1` on every checkout: a round trip and,
measured through `Database.read()`, about 0.4 ms of the gateway's CPU for every
transaction (issue 11). A connection handed back a moment ago is as alive as the
statement it just ran proved, so the ping is only for one that waited in the pool
at least `after` seconds (a restart or an idle timeout on the server's side closes
those). One that fails its ping is replaced, with every other pooled connection
older than it, before the caller sees it; a connection that dies under load fails
its one statement and SQLAlchemy then replaces the pool the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import event, exc
from sqlalchemy.ext.asyncio import AsyncEngine

RETURNED_AT = "jobgate_returned_at"  # key in the connection record's info: monotonic time

Clock = Callable[[], float]


def needs_ping(info: dict[str, Any], now: float, after: float) -> bool:
    """Whether a connection coming out of the pool is pinged first.

    A new connection (never returned) is not: it was just opened.
    """
    returned = info.get(RETURNED_AT)
    return returned is not None and now - returned >= after


def install(engine: AsyncEngine, after: float, clock: Clock = time.monotonic) -> None:
    """Listen on the engine's pool: note when each connection comes back, ping on the
    way out if it has been idle `after` seconds or more (0: every checkout)."""
    dialect = engine.dialect

    @event.listens_for(engine.sync_engine, "checkin")
    def _returned(_dbapi_conn: Any, record: Any) -> None:
        if record is not None:
            record.info[RETURNED_AT] = clock()

    @event.listens_for(engine.sync_engine, "checkout")
    def _checkout(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        if not needs_ping(record.info, clock(), after):
            return
        try:
            dialect.do_ping(dbapi_conn)
        except dialect.loaded_dbapi.Error as err:
            if dialect.is_disconnect(err, dbapi_conn, None):
                # The pool replaces this connection and every one older than it, and
                # retries the checkout (SQLAlchemy's pessimistic disconnect handling).
                raise exc.InvalidatePoolError() from err
            raise
