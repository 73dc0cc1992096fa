"""Reading the chain back for `jobgate audit verify|export`: one consistent snapshot.

A sync engine of its own (the CLI runs outside any event loop) whose single
read transaction sees the head and the rows as of one moment while gateways keep
appending: REPEATABLE READ on PostgreSQL, a deferred BEGIN on SQLite (WAL
snapshot, without taking the write lock the gateway's engine takes).

Rows are read as stored and turned into entries here, one at a time: a row someone
wrote outside jobgate (a timestamp that is not one, bytes that are not UTF-8, a number
where text belongs) becomes `Unreadable` with its seq, for verify to report, instead of
an exception that would stop the walk without saying where.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import String, create_engine, event, select, type_coerce
from sqlalchemy.engine import Connection, Row

from app.audit.chain import Entry, canonical_payload, format_at
from app.audit.models import AuditCheckpoint, AuditEntry, AuditHead
from app.audit.verify import Checkpoint, Head, Unreadable
from app.audit.verify import Row as ChainRow
from app.core.db.database import is_sqlite, sync_url
from app.core.db.row_table import table_of

LOG = table_of(AuditEntry)
HEAD = table_of(AuditHead)
CHECKPOINTS = table_of(AuditCheckpoint)
BATCH = 1000  # rows fetched at a time


@contextmanager
def snapshot(database_url: str) -> Iterator[Connection]:
    """A connection inside one read-only snapshot transaction."""
    engine = create_engine(sync_url(database_url))
    if is_sqlite(database_url):

        @event.listens_for(engine, "connect")
        def _connect(dbapi_conn: Any, _rec: Any) -> None:
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
            # Bytes that are not UTF-8 come back with U+FFFD: the entry's hash then
            # fails (it was edited) instead of the read failing with no seq to name.
            dbapi_conn.text_factory = _tolerant_text

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


def head(conn: Connection) -> Head | None:
    """The head row, or None when it was deleted."""
    row = conn.execute(select(HEAD.c.seq, HEAD.c.hash, HEAD.c.signature)).first()
    return None if row is None else Head(int(row.seq), str(row.hash), row.signature)


# `at` as the driver hands it over (SQLite: the stored text, which need not be a time).
_AT = type_coerce(LOG.c.at, String).label("at")
_ENTRIES = select(
    LOG.c.seq, _AT, LOG.c.kind, LOG.c.operation_id, LOG.c.actor, LOG.c.payload,
    LOG.c.prev_hash, LOG.c.hash,
).order_by(LOG.c.seq)  # fmt: skip


def checkpoint(conn: Connection) -> Checkpoint | None:
    """The newest checkpoint (where the chain starts after a prune), or None."""
    cols = (CHECKPOINTS.c.seq, CHECKPOINTS.c.hash, CHECKPOINTS.c.count, CHECKPOINTS.c.signature)
    row = conn.execute(select(*cols).order_by(CHECKPOINTS.c.seq.desc()).limit(1)).first()
    return None if row is None else Checkpoint(int(row[0]), str(row[1]), int(row[2]), row[3])


def checkpoint_hash(conn: Connection, seq: int) -> str | None:
    """The hash an earlier checkpoint recorded for entry `seq`, if one ended there."""
    found = conn.execute(select(CHECKPOINTS.c.hash).where(CHECKPOINTS.c.seq == seq)).scalar()
    return None if found is None else str(found)


def entries(conn: Connection, after: int = 0) -> Iterator[ChainRow]:
    """Every entry after seq `after` (a checkpoint's) in seq order, streamed; a row that
    is not an entry is `Unreadable`."""
    stmt = _ENTRIES.where(LOG.c.seq > after) if after else _ENTRIES
    result = conn.execution_options(yield_per=BATCH).execute(stmt)
    try:
        for r in result:
            yield _entry(r)
    finally:
        result.close()


def _entry(r: Row[Any]) -> ChainRow:
    texts = {"kind": r.kind, "actor": r.actor, "payload": r.payload}
    texts |= {"prev_hash": r.prev_hash, "hash": r.hash}
    for name, value in texts.items():
        if not isinstance(value, str):
            return Unreadable(r.seq, f"its {name} is not text ({_shown(value)})")
    if r.operation_id is not None and not isinstance(r.operation_id, str):
        return Unreadable(r.seq, f"its operation_id is not text ({_shown(r.operation_id)})")
    at = parse_at(r.at)
    if at is None:
        return Unreadable(r.seq, f"its time {_shown(r.at)} is not a timestamp")
    return Entry(r.seq, at, r.kind, r.operation_id, r.actor, r.payload, r.prev_hash, r.hash)


def parse_at(value: Any) -> datetime | None:
    """A stored or exported `at` as an aware UTC time, or None when it is not one."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _tolerant_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


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


def checkpoint_json(cp: Checkpoint) -> str:
    """The first line of an export after a prune: where the exported chain starts."""
    record = {"seq": cp.seq, "hash": cp.hash, "count": cp.count, "signature": cp.signature}
    return json.dumps({"checkpoint": record}, separators=(",", ":"))


def checkpoint_from_json(line: str) -> Checkpoint | None:
    """The checkpoint an export's first line records, or None when it is an entry."""
    try:
        d = json.loads(line)
    except ValueError:
        return None
    cp = d.get("checkpoint") if isinstance(d, dict) else None
    if not isinstance(cp, dict):
        return None
    seq, value, count, sig = cp.get("seq"), cp.get("hash"), cp.get("count"), cp.get("signature")
    if not (isinstance(seq, int) and isinstance(value, str) and isinstance(count, int)):
        return None
    return Checkpoint(seq, value, count, sig if isinstance(sig, str) else None)


def from_json(line: str, where: str = "") -> ChainRow:
    """An exported record back into an Entry (the payload re-canonicalized, as hashed);
    a line that is not one is `Unreadable`, with its seq when that much can be read."""
    try:
        d = json.loads(line)
    except ValueError:
        return Unreadable(None, "it is not JSON", where)
    if not isinstance(d, dict):
        return Unreadable(None, "it is not a JSON object", where)
    seq = d.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        return Unreadable(None, f"its seq {_shown(seq)} is not a number", where)
    at = parse_at(d.get("at"))
    if at is None:
        return Unreadable(seq, f"its time {_shown(d.get('at'))} is not a timestamp", where)
    texts = ("kind", "actor", "prev_hash", "hash")
    missing = [k for k in texts if not isinstance(d.get(k), str)]
    if missing or "payload" not in d or not isinstance(d.get("operation_id"), str | None):
        return Unreadable(seq, f"it lacks {', '.join(missing) or 'a field'} as text", where)
    return Entry(
        seq=seq,
        at=at,
        kind=d["kind"],
        operation_id=d["operation_id"],
        actor=d["actor"],
        payload=canonical_payload(d["payload"]),
        prev_hash=d["prev_hash"],
        hash=d["hash"],
    )
