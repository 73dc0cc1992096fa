"""Appending to the audit trail, in the transaction of the fact it records.

Writers call `record()` (or `record_history()`) next to the fact; nothing is
written then. When that transaction commits, `append_pending` (a commit hook the
app gives its `Database`, app/main.py) appends them in one statement: each INSERT
reads the head row
(`FOR UPDATE` on PostgreSQL; on SQLite the writer lock already serializes), chains
after it, and moves it (a trigger), all in the same transaction. So the entries
commit with their fact or not at all, every process extends one chain, and the head
lock is the last lock a transaction takes and is held only while it commits (no
lock-order deadlock with row locks). A rollback drops the waiting entries.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select, text, update

from app.audit.chain import Entry, canonical_payload, prefix, seal, sign_head
from app.audit.models import AuditEntry, AuditHead
from app.core.config import Settings
from app.core.db.database import Database
from app.core.db.row_table import table_of
from app.core.db.txn import Txn
from app.core.db.types import UTCDateTime

LOG = table_of(AuditEntry)
HEAD = table_of(AuditHead)

# Keys in a transaction's `info` (set once per Database through `session_info`).
ENABLED = "jobgate.audit.enabled"
SIGNING_KEY = "jobgate.audit.signing_key"
PENDING = "jobgate.audit.pending"

# History kinds that the audit trail names differently (the rest keep their name).
_HISTORY_KINDS = {
    "exchange": "provider_exchange",
    "refused": "refused_transition",
    "decision": "operator_decision",
    "intent": "cancel_requested",
}


# Transition evidence that is an operator's decision: a resolve, an approval, a denial.
_DECISIONS = frozenset({"operator_decision", "approved", "denied"})


def session_info(enabled: bool, signing_key: str | None) -> dict[str, Any]:
    """What a Database puts in every transaction's `info` so appends follow the settings."""
    return {ENABLED: enabled, SIGNING_KEY: signing_key}


def record(
    txn: Txn,
    *,
    kind: str,
    at: datetime,
    actor: str,
    operation_id: str | None = None,
    payload: Any = None,
) -> None:
    """Queue one entry; it is chained and written when this transaction commits."""
    info = txn.info
    if info.get(ENABLED, True) is False:
        return
    pending: list[Entry] = info.setdefault(PENDING, [])
    pending.append(
        Entry(
            seq=0,  # numbered under the head lock
            at=at,
            kind=kind,
            operation_id=operation_id,
            actor=actor,
            payload=canonical_payload(payload),
            prev_hash="",
        )
    )


def history_kind(kind: str, from_state: str | None, data: Any) -> str:
    """The audit name of a history row: intent, operator_decision, transition, ..."""
    if kind == "transition":
        if from_state is None:
            return "intent"
        if isinstance(data, dict) and data.get("evidence") in _DECISIONS:
            return "operator_decision"
    return _HISTORY_KINDS.get(kind, kind)


def record_history(
    txn: Txn,
    *,
    operation_id: str,
    at: datetime,
    kind: str,
    actor: str,
    cause: str,
    from_state: str | None,
    to_state: str | None,
    data: Any,
) -> None:
    """The audit entry of one history row (every history row has one)."""
    record(
        txn,
        kind=history_kind(kind, from_state, data),
        at=at,
        actor=actor,
        operation_id=operation_id,
        payload={
            "history_kind": kind,
            "cause": cause,
            "from_state": from_state,
            "to_state": to_state,
            "data": data,
        },
    )


# One statement per entry, all sent at once (executemany): each reads the head, chains
# after it and, through the AFTER INSERT trigger of migration 0006, moves it. The hash
# is `chain.seal(prefix, prev_hash, seq)`: in PostgreSQL with its own sha256, in SQLite
# through that Python function registered on the connection. Fewer round trips inside
# the transaction is what keeps the trail cheap: on SQLite every writer waits for them.
# The head is joined to one constant row, so that without a head (deleted behind the
# guard of migration 0010) the statement still makes a row, of NULLs,
# which the NOT NULL columns refuse: the fact's transaction fails loudly instead of
# committing with no entry.
_APPEND = """
INSERT INTO audit_log (seq, at, kind, operation_id, actor, payload, prev_hash, hash)
SELECT h.seq + 1, :at, :kind, :operation_id, :actor, :payload, h.hash, {hash}
FROM (SELECT 1 AS one) AS always
LEFT JOIN (SELECT seq, hash FROM audit_head WHERE id = 1{lock}) AS h ON 1 = 1
"""
_SQLITE_APPEND = text(
    _APPEND.format(hash="jobgate_audit_seal(:prefix, h.hash, h.seq + 1)", lock="")
).bindparams(bindparam("at", type_=UTCDateTime()))
_PG_APPEND = text(
    _APPEND.format(
        hash='encode(sha256(convert_to(CAST(:prefix AS text) || h.hash || \'","seq":\' '
        "|| (h.seq + 1) || '}', 'UTF8')), 'hex')",
        lock=" FOR UPDATE",  # an appender without the queue below waits here
    )
).bindparams(bindparam("at", type_=UTCDateTime()))
# PostgreSQL: appenders queue on a transaction-level advisory lock first, in a statement
# of its own, so that the append's snapshot is taken after the previous appender
# committed. Queued on the head row alone, every waiter re-read the head's newer
# version when it got the lock (EvalPlanQual) and the lock manager woke each one twice:
# with 16 writers at once, a 2-entry append cost the server about 600 us against about
# 440 us queued here (docs/performance.md). FOR UPDATE stays, so a process without this queue (an
# older release during an upgrade) still takes its turn on the row.
AUDIT_LOCK_KEY = 0x6A6F6267617465  # "jobgate"
_PG_QUEUE = select(func.pg_advisory_xact_lock(AUDIT_LOCK_KEY))
_SEAL_REGISTERED = "jobgate.audit.seal"


async def append(txn: Txn, pending: list[Entry], signing_key: str | None) -> None:
    """Chain and insert `pending` after the current head, in this transaction."""
    if txn.dialect.name == "sqlite":
        info = txn.connection.info  # lives as long as the driver's connection
        if not info.get(_SEAL_REGISTERED):
            txn.connection.conn.create_function(
                "jobgate_audit_seal", 3, _seal_or_null, deterministic=True
            )
            info[_SEAL_REGISTERED] = True
        stmt = _SQLITE_APPEND
    else:
        stmt = _PG_APPEND
        await txn.execute(_PG_QUEUE)
    await txn.execute(
        stmt,
        [
            {
                "at": e.at,
                "kind": e.kind,
                "operation_id": e.operation_id,
                "actor": e.actor,
                "payload": e.payload,
                "prefix": prefix(e),
            }
            for e in pending
        ],
    )
    if signing_key:  # the trigger cleared the old signature; sign the new head
        head = (await txn.execute(_HEAD_HASH)).scalar_one()
        await txn.execute(
            update(HEAD).where(HEAD.c.id == 1).values(signature=sign_head(signing_key, head))
        )


_HEAD_HASH = select(HEAD.c.hash).where(HEAD.c.id == 1)


def _seal_or_null(head: str, prev_hash: str | None, seq: int | None) -> str | None:
    """`seal` for SQLite; NULL without a head, for the NOT NULL columns to refuse."""
    return None if prev_hash is None or seq is None else seal(head, prev_hash, seq)


async def append_pending(txn: Txn) -> None:
    """The commit hook: chain and insert the entries this transaction queued."""
    pending: list[Entry] | None = txn.info.pop(PENDING, None)
    if pending:
        await append(txn, pending, txn.info.get(SIGNING_KEY))


def audited_database(settings: Settings) -> Database:
    """The configured database, its commits appending the audit trail's queued entries
    (when the trail is on) and its sessions bounded (`Settings.db_session_settings`): what
    every process that writes operations or keys opens."""
    return Database(
        settings.database_url,
        info=session_info(settings.audit_enabled, settings.audit_signing_key),
        ping_after=settings.db_ping_after_idle_seconds,
        before_commit=[append_pending],
        session_settings=settings.db_session_settings(),
    )
