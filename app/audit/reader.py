"""Reading the chain back for `jobgate audit verify|export`: one consistent snapshot.

A sync engine of its own (the CLI runs outside any event loop) whose single
read transaction sees the head and the rows as of one moment while gateways keep
appending: REPEATABLE READ on PostgreSQL, a deferred BEGIN on SQLite (WAL
snapshot, without taking the write lock the gateway's engine takes).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import create_engine, event, select
from sqlalchemy.engine import Connection

from app.audit.chain import Entry, canonical_payload, format_at
from app.audit.models import AuditEntry, AuditHead
from app.audit.verify import Head
from app.core.db import is_sqlite, sync_url

LOG = AuditEntry.__table__  # type: ignore[attr-defined]
HEAD = AuditHead.__table__  # type: ignore[attr-defined]
BATCH = 1000  # rows fetched at a time


@contextmanager
def snapshot(database_url: str) -> Iterator[Connection]:
    """A connection inside one read-only snapshot transaction."""
    engine = create_engine(sync_url(database_url))
    if is_sqlite(database_url):

        @event.listens_for(engine, "connect")
        def _connect(dbapi_conn: Any, _rec: Any) -> None:
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves

        @event.listens_for(engine, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN")
    else:
        engine = engine.execution_options(isolation_level="REPEATABLE READ")
    try:
        with engine.connect() as conn, conn.begin():
            yield conn
    finally:
        engine.dispose()


def head(conn: Connection) -> Head:
    row = conn.execute(select(HEAD.c.seq, HEAD.c.hash, HEAD.c.signature)).one()
    return Head(int(row.seq), row.hash, row.signature)


def entries(conn: Connection) -> Iterator[Entry]:
    """Every entry in seq order, streamed."""
    stmt = select(LOG).order_by(LOG.c.seq)
    result = conn.execution_options(yield_per=BATCH).execute(stmt)
    try:
        for r in result:
            yield Entry(
                r.seq, r.at, r.kind, r.operation_id, r.actor, r.payload, r.prev_hash, r.hash
            )
    finally:
        result.close()


def seq_of_hash(conn: Connection, value: str) -> int | None:
    """The entry whose hash is `value` (a scan, only done once a break is found)."""
    found = conn.execute(select(LOG.c.seq).where(LOG.c.hash == value).limit(1)).scalar()
    return None if found is None else int(found)


def to_json(e: Entry) -> str:
    """One JSON Lines record; the payload as JSON, the rest as stored."""
    return json.dumps(
        {
            "seq": e.seq,
            "at": format_at(e.at),
            "kind": e.kind,
            "operation_id": e.operation_id,
            "actor": e.actor,
            "payload": json.loads(e.payload),
            "prev_hash": e.prev_hash,
            "hash": e.hash,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def from_json(line: str) -> Entry:
    """An exported record back into an Entry (the payload re-canonicalized, as hashed)."""
    d = json.loads(line)
    return Entry(
        seq=int(d["seq"]),
        at=datetime.fromisoformat(d["at"].replace("Z", "+00:00")),
        kind=d["kind"],
        operation_id=d["operation_id"],
        actor=d["actor"],
        payload=canonical_payload(d["payload"]),
        prev_hash=d["prev_hash"],
        hash=d["hash"],
    )
