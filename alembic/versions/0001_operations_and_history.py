"""operations and append-only history

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

from app.core.db.types import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "operations",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("principal", sa.String(), nullable=False),
        sa.Column("idempotency_key", sa.String(), nullable=False),
        sa.Column("fingerprint", sa.String(), nullable=False),
        sa.Column("provider", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("input", sa.JSON(), nullable=False),
        sa.Column("provider_token", sa.String(), nullable=False),
        sa.Column("trace_id", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("remote_job_id", sa.String(), nullable=True),
        sa.Column("remote_state", sa.String(), nullable=True),
        sa.Column("remote_class", sa.String(), nullable=True),
        sa.Column("progress_completed", sa.Integer(), nullable=True),
        sa.Column("progress_total", sa.Integer(), nullable=True),
        sa.Column("create_deadline_at", UTCDateTime(), nullable=False),
        sa.Column("result_deadline_at", UTCDateTime(), nullable=False),
        sa.Column("cancel_deadline_at", UTCDateTime(), nullable=True),
        sa.Column("cancel_seconds", sa.Float(), nullable=True),
        sa.Column("next_poll_at", UTCDateTime(), nullable=True),
        sa.Column("poll_attempt", sa.Integer(), nullable=False),
        sa.Column("next_poll_reason", sa.String(), nullable=True),
        sa.Column("lease_owner", sa.String(), nullable=True),
        sa.Column("lease_expires_at", UTCDateTime(), nullable=True),
        sa.Column("lease_token", sa.Integer(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("result_ref", sa.String(), nullable=True),
        sa.Column("result_size", sa.Integer(), nullable=True),
        sa.Column("result_sha256", sa.String(), nullable=True),
        sa.Column("result_summary", sa.JSON(), nullable=True),
        sa.Column("error", sa.JSON(), nullable=True),
        sa.Column("cancel_reason", sa.String(), nullable=True),
        sa.Column("cancel_requested_by", sa.String(), nullable=True),
        sa.Column("cancel_requested_at", UTCDateTime(), nullable=True),
        sa.Column("acknowledged_at", UTCDateTime(), nullable=True),
        sa.Column("acknowledged_by", sa.String(), nullable=True),
        sa.Column("callback_url", sa.String(), nullable=True),
        sa.Column("labels", sa.JSON(), nullable=True),
        sa.Column("approval", sa.JSON(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("principal", "idempotency_key", name="uq_operations_principal_key"),
        sa.UniqueConstraint("provider_token", name="uq_operations_provider_token"),
    )
    op.create_index("ix_operations_state", "operations", ["state"])
    op.create_index("ix_operations_trace_id", "operations", ["trace_id"])
    op.create_index("ix_operations_remote", "operations", ["provider", "remote_job_id"])
    op.create_index("ix_operations_created", "operations", ["created_at", "id"])
    # Only rows the observers still have work on are in this index, so finding due
    # operations costs what is due, not what has ever been stored.
    op.create_index(
        "ix_operations_due",
        "operations",
        ["next_poll_at"],
        sqlite_where=sa.text("next_poll_at IS NOT NULL"),
        postgresql_where=sa.text("next_poll_at IS NOT NULL"),
    )

    op.create_table(
        "operation_history",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("operation_id", sa.String(), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("actor", sa.String(), nullable=False),
        sa.Column("from_state", sa.String(), nullable=True),
        sa.Column("to_state", sa.String(), nullable=True),
        sa.Column("cause", sa.String(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=True),
    )
    op.create_index("ix_operation_history_operation_id", "operation_history", ["operation_id"])
    _refuse_history_changes()

    op.create_table(
        "result_items",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("operation_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("item", sa.JSON(), nullable=False),
        sa.UniqueConstraint("operation_id", "position", name="uq_result_items_pos"),
    )


def _refuse_history_changes() -> None:
    """History is append-only: the database itself refuses UPDATE and DELETE."""
    if op.get_bind().dialect.name == "sqlite":
        for verb in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER operation_history_no_{verb.lower()} "
                f"BEFORE {verb} ON operation_history "
                "BEGIN SELECT RAISE(ABORT, 'operation_history is append-only'); END"
            )
        return
    op.execute(
        "CREATE FUNCTION jobgate_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$"
    )
    op.execute(
        "CREATE TRIGGER operation_history_append_only BEFORE UPDATE OR DELETE "
        "ON operation_history FOR EACH ROW EXECUTE FUNCTION jobgate_append_only()"
    )
    op.execute(
        "CREATE TRIGGER operation_history_no_truncate BEFORE TRUNCATE "
        "ON operation_history FOR EACH STATEMENT EXECUTE FUNCTION jobgate_append_only()"
    )


def downgrade() -> None:
    op.drop_table("result_items")
    op.drop_table("operation_history")
    op.drop_table("operations")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS jobgate_append_only()")
