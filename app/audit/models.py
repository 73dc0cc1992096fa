"""The audit tables: the hash-chained log and its one-row head.

`audit_log` is append-only (the database refuses UPDATE, DELETE and TRUNCATE;
see migration 0006). `audit_head` holds the last entry's seq and hash, and its
HMAC when a signing key is configured; appenders lock this row, which is what
keeps several processes on one chain. It cannot be deleted, truncated, inserted
again or moved back (migration 0010).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Column, Integer, Text
from sqlmodel import Field, SQLModel

from app.core.db.types import UTCDateTime


class AuditEntry(SQLModel, table=True):
    """One fact, chained to the one before it by `prev_hash`."""

    __tablename__ = "audit_log"

    # Assigned by the appender (head.seq + 1), never by the database: a gap is a removal.
    seq: int = Field(
        sa_column=Column(
            BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=False
        )
    )
    at: datetime = Field(sa_type=UTCDateTime)
    kind: str
    operation_id: str | None = Field(default=None, index=True)
    actor: str
    payload: str = Field(sa_column=Column(Text, nullable=False))  # RFC 8785 JSON text
    prev_hash: str
    hash: str


class AuditHead(SQLModel, table=True):
    """The chain's end as the appenders left it (one row, id 1)."""

    __tablename__ = "audit_head"

    id: int = Field(primary_key=True)
    seq: int = Field(sa_type=BigInteger)
    hash: str
    signature: str | None = None  # HMAC-SHA256 of `hash` under JOBGATE_AUDIT_SIGNING_KEY


class AuditCheckpoint(SQLModel, table=True):
    """Where a pruned prefix of the chain ended: entries 1..`seq` were removed after the
    retention period, `hash` is entry `seq`'s, and `signature` its HMAC under
    JOBGATE_AUDIT_SIGNING_KEY. Append-only; the newest is where verify starts."""

    __tablename__ = "audit_checkpoints"

    seq: int = Field(
        sa_column=Column(
            BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=False
        )
    )
    hash: str
    count: int = Field(sa_type=BigInteger)
    at: datetime = Field(sa_type=UTCDateTime)
    signature: str | None = None
