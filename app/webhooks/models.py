"""The table of provider webhook events received: one row per (provider, event id).

The UNIQUE constraint is the de-duplication: a provider that retries a delivery
(same event id) finds its row already there and nothing else happens.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Column, Integer, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core.db.types import UTCDateTime


class WebhookEvent(SQLModel, table=True):
    """A verified provider event that matched an operation."""

    __tablename__ = "webhook_events"
    __table_args__ = (
        UniqueConstraint("provider", "event_id", name="uq_webhook_events_provider_event"),
    )

    id: int | None = Field(
        default=None,
        sa_column=Column(
            BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
        ),
    )
    provider: str
    event_id: str
    event_type: str | None = None
    remote_job_id: str | None = None
    remote_state: str | None = None
    operation_id: str | None = Field(default=None, index=True)
    received_at: datetime = Field(sa_type=UTCDateTime)
