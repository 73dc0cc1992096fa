"""Tables of the operations domain: the current projection and its append-only history."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Integer, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from app.core.db.row_table import table_model
from app.core.db.types import UTCDateTime
from app.operations.domain.operation import Operation


def _json() -> Any:
    return Field(default=None, sa_type=JSON, nullable=True)


# The `operations` table: the current state of one logical operation (the projection of
# its history), declared once by its row, `Operation` (app/operations/domain/operation.py).
OperationTable = table_model(
    Operation,
    "operations",
    args=(
        UniqueConstraint("principal", "idempotency_key", name="uq_operations_principal_key"),
        UniqueConstraint("provider_token", name="uq_operations_provider_token"),
        # One operation per remote job (migration 0019): a concurrent accept_job loses.
        Index(
            "uq_operations_remote_job",
            "provider",
            "remote_job_id",
            unique=True,
            sqlite_where=text("remote_job_id IS NOT NULL"),
            postgresql_where=text("remote_job_id IS NOT NULL"),
        ),
        Index("ix_operations_created", "created_at", "id"),
        # The policy's per-key counts (in flight, per minute, per day: app/policy).
        Index("ix_operations_principal_created", "principal", "created_at"),
        # The prune's scan: finished operations, oldest change first (app/retention).
        Index("ix_operations_state_updated", "state", "updated_at"),
        # A list by state or status, newest first, reads its page off this index instead
        # of sorting every row in the state (docs/performance.md, "Growth").
        Index("ix_operations_state_created", "state", "created_at", "id"),
        # A stored result file is removed with the last operation that names it.
        Index(
            "ix_operations_result_ref",
            "result_ref",
            sqlite_where=text("result_ref IS NOT NULL"),
            postgresql_where=text("result_ref IS NOT NULL"),
        ),
        # The claim's index: only rows the observer still has to look at.
        Index(
            "ix_operations_due",
            "next_poll_at",
            sqlite_where=text("next_poll_at IS NOT NULL"),
            postgresql_where=text("next_poll_at IS NOT NULL"),
        ),
    ),
)


class HistoryEntry(SQLModel, table=True):
    """One append-only row: a transition, an external exchange, an observation or a refusal.

    The database refuses UPDATE and DELETE on this table (see the first migration).
    """

    __tablename__ = "operation_history"

    id: int | None = Field(
        default=None,
        sa_column=Column(
            BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
        ),
    )
    operation_id: str = Field(index=True)
    at: datetime = Field(sa_type=UTCDateTime)
    kind: str  # transition | exchange | observation | refused | resend_refused | decision | note
    actor: str
    from_state: str | None = None
    to_state: str | None = None
    cause: str
    data: Any = _json()


class ResultItem(SQLModel, table=True):
    """One failed item of a partial result, served page by page by the errors endpoint."""

    __tablename__ = "result_items"
    __table_args__ = (UniqueConstraint("operation_id", "position", name="uq_result_items_pos"),)

    id: int | None = Field(
        default=None,
        sa_column=Column(
            BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
        ),
    )
    operation_id: str
    position: int
    item: Any = Field(sa_type=JSON)


class Tombstone(SQLModel, table=True):
    """What is left of a pruned operation: enough to answer a replay of its key with
    `410 operation_pruned` (what it was, how it ended, when) and start nothing."""

    __tablename__ = "operation_tombstones"
    __table_args__ = (
        UniqueConstraint("principal", "idempotency_key", name="uq_tombstones_principal_key"),
    )

    operation_id: str = Field(primary_key=True)
    principal: str
    idempotency_key: str
    fingerprint: str
    provider: str
    kind: str
    state: str
    outcome: str | None = None
    finished_at: datetime = Field(sa_type=UTCDateTime, index=True)
    pruned_at: datetime = Field(sa_type=UTCDateTime)
