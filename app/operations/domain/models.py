"""Tables of the operations domain: the current projection and its append-only history."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Integer, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from app.core.db.types import StrEnumType, UTCDateTime
from app.operations.domain.states import State


def _ts(nullable: bool = True, index: bool = False) -> Any:
    return Field(default=None, sa_type=UTCDateTime, nullable=nullable, index=index)


def _json() -> Any:
    return Field(default=None, sa_type=JSON, nullable=True)


class OperationTable(SQLModel, table=True):
    """The `operations` table: the current state of one logical operation (the projection
    of its history). Code reads and moves it as `app.operations.domain.operation.Operation`."""

    __tablename__ = "operations"
    __table_args__ = (
        UniqueConstraint("principal", "idempotency_key", name="uq_operations_principal_key"),
        UniqueConstraint("provider_token", name="uq_operations_provider_token"),
        Index("ix_operations_remote", "provider", "remote_job_id"),
        Index("ix_operations_created", "created_at", "id"),
        # The policy's per-key counts (in flight, per minute, per day: app/policy).
        Index("ix_operations_principal_created", "principal", "created_at"),
        # The claim's index: only rows the observer still has to look at.
        Index(
            "ix_operations_due",
            "next_poll_at",
            sqlite_where=text("next_poll_at IS NOT NULL"),
            postgresql_where=text("next_poll_at IS NOT NULL"),
        ),
    )

    id: str = Field(primary_key=True)
    principal: str
    idempotency_key: str
    fingerprint: str
    provider: str
    kind: str
    input: Any = Field(sa_type=JSON)
    provider_token: str
    trace_id: str = Field(index=True)
    # How a single remote job is ensured (token | lookup | none), as promised at intake.
    single_create: str = "none"

    state: State = Field(sa_type=StrEnumType(State), index=True)
    version: int = 0

    remote_job_id: str | None = None
    # Where the provider said to read and cancel the job (a create answer's URL, e.g.
    # Operation-Location); NULL: the profile's path templates.
    remote_status_url: str | None = None
    remote_cancel_url: str | None = None
    remote_state: str | None = None
    remote_class: str | None = None
    progress_completed: int | None = None
    progress_total: int | None = None

    create_deadline_at: datetime = Field(sa_type=UTCDateTime)
    result_deadline_at: datetime = Field(sa_type=UTCDateTime)
    cancel_deadline_at: datetime | None = _ts()
    cancel_seconds: float | None = None  # asked at create; the cancel deadline once cancelled

    # When an observer should next look at it; NULL once the gateway has nothing to do.
    next_poll_at: datetime | None = _ts()
    poll_attempt: int = 0
    next_poll_reason: str | None = None

    lease_owner: str | None = None
    lease_expires_at: datetime | None = _ts()
    lease_token: int = 0
    step_failures: int = 0  # exceptions in a row while moving it; `stalled` at the limit

    result: Any = _json()
    result_ref: str | None = None
    result_size: int | None = None
    result_sha256: str | None = None
    result_summary: Any = _json()
    # The outcome table's verdict for a result it collected (app/providers/answers/outcome.py):
    # `succeeded` or `completed_with_errors` on a `succeeded` row; NULL elsewhere.
    outcome: str | None = None
    error: Any = _json()

    cancel_reason: str | None = None
    cancel_requested_by: str | None = None
    cancel_requested_at: datetime | None = _ts()

    # An operator's acknowledgement of a result that needs a look (e.g. partial results).
    acknowledged_at: datetime | None = _ts()
    acknowledged_by: str | None = None

    callback_url: str | None = None
    labels: Any = _json()
    approval: Any = _json()
    # The policy's cost units for this create (docs/policy.md); 0 once it was never sent.
    cost: float | None = None
    # The approval gate: rule, who asked, cost, deadline, and the decision once made.
    gate: Any = _json()
    # The agent's result checks (`validation` beside `input`); NULL: the profile's alone.
    validation: Any = _json()

    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)


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
