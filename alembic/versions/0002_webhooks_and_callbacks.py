"""provider webhook events, completion callback outbox and attempts

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

from app.core.db.types import UTCDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def _pk() -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(
        "id",
        sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
        primary_key=True,
        autoincrement=True,
    )


def upgrade() -> None:
    op.create_table(
        "webhook_events",
        _pk(),
        sa.Column("provider", sa.String(), nullable=False),
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("event_type", sa.String(), nullable=True),
        sa.Column("remote_job_id", sa.String(), nullable=True),
        sa.Column("remote_state", sa.String(), nullable=True),
        sa.Column("operation_id", sa.String(), nullable=True),
        sa.Column("received_at", UTCDateTime(), nullable=False),
        # De-duplication of provider retries: one row per event id.
        sa.UniqueConstraint("provider", "event_id", name="uq_webhook_events_provider_event"),
    )
    op.create_index("ix_webhook_events_operation_id", "webhook_events", ["operation_id"])

    op.create_table(
        "callback_outbox",
        _pk(),
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("operation_id", sa.String(), nullable=False),
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=True),
        sa.Column("lease_owner", sa.String(), nullable=True),
        sa.Column("lease_expires_at", UTCDateTime(), nullable=True),
        sa.Column("lease_token", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.String(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("delivered_at", UTCDateTime(), nullable=True),
        # The gateway never enqueues a second completion for one (operation, final state).
        sa.UniqueConstraint("event_id", name="uq_callback_outbox_event"),
    )
    op.create_index("ix_callback_outbox_operation_id", "callback_outbox", ["operation_id"])
    op.create_index("ix_callback_outbox_due", "callback_outbox", ["status", "next_attempt_at"])

    op.create_table(
        "callback_attempts",
        _pk(),
        sa.Column(
            "outbox_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("worker", sa.String(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(), nullable=True),
        sa.Column("response_body", sa.String(), nullable=True),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=False),
        sa.UniqueConstraint("outbox_id", "attempt", name="uq_callback_attempts_number"),
    )
    op.create_index("ix_callback_attempts_outbox_id", "callback_attempts", ["outbox_id"])


def downgrade() -> None:
    op.drop_table("callback_attempts")
    op.drop_table("callback_outbox")
    op.drop_table("webhook_events")
