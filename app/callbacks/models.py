"""Tables of completion callbacks: the outbox (one row per event) and every attempt.

An outbox row is written in the same transaction as the transition to a done
state; its `event_id` ("<operation id>:<final state>") is UNIQUE, so the gateway
can never enqueue a second completion for the same operation and final state.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Integer, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core.db.types import UTCDateTime


def _pk() -> Any:
    return Field(
        default=None,
        sa_column=Column(
            BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
        ),
    )


class CallbackOutbox(SQLModel, table=True):
    """One completion event to deliver to an operation's `callback_url`."""

    __tablename__ = "callback_outbox"
    __table_args__ = (
        UniqueConstraint("event_id", name="uq_callback_outbox_event"),
        Index("ix_callback_outbox_due", "status", "next_attempt_at"),
    )

    id: int | None = _pk()
    event_id: str
    operation_id: str = Field(index=True)
    url: str
    payload: Any = Field(sa_type=JSON)
    status: str  # pending | delivered | failed (gave up)
    attempts: int = 0
    next_attempt_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    lease_owner: str | None = None
    lease_expires_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    lease_token: int = 0
    last_error: str | None = None
    created_at: datetime = Field(sa_type=UTCDateTime)
    delivered_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class CallbackAttempt(SQLModel, table=True):
    """One delivery attempt: what was sent where, and what came back."""

    __tablename__ = "callback_attempts"
    __table_args__ = (UniqueConstraint("outbox_id", "attempt", name="uq_callback_attempts_number"),)

    id: int | None = _pk()
    outbox_id: int = Field(
        sa_column=Column(
            "outbox_id", BigInteger().with_variant(Integer, "sqlite"), nullable=False, index=True
        )
    )
    event_id: str
    attempt: int
    at: datetime = Field(sa_type=UTCDateTime)
    worker: str
    status_code: int | None = None
    error: str | None = None
    response_body: str | None = None
    duration_ms: float
    outcome: str  # delivered | retry | gave_up
