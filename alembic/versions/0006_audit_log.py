"""audit_log (hash-chained, append-only) and audit_head (the chain's end)

Revision ID: 0006_audit_log
Revises: 0005
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

from app.core.db.types import UTCDateTime

revision = "0006_audit_log"
down_revision = "0005"
branch_labels = None
depends_on = None

GENESIS = "0" * 64


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=False,
        ),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("operation_id", sa.String(), nullable=True),
        sa.Column("actor", sa.String(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("prev_hash", sa.String(), nullable=False),
        sa.Column("hash", sa.String(), nullable=False),
    )
    op.create_index("ix_audit_log_operation_id", "audit_log", ["operation_id"])
    op.create_table(
        "audit_head",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(), nullable=False),
        sa.Column("signature", sa.String(), nullable=True),
        sa.CheckConstraint("id = 1", name="ck_audit_head_one_row"),
    )
    op.execute(f"INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '{GENESIS}')")
    _move_head_on_insert()
    _refuse_log_changes()


def _move_head_on_insert() -> None:
    """Every entry moves the head in the statement that inserts it (no extra round trip);
    the old signature goes with it, and the appender signs the new head if it has a key."""
    move = "UPDATE audit_head SET seq = NEW.seq, hash = NEW.hash, signature = NULL WHERE id = 1"
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            f"CREATE TRIGGER audit_log_moves_head AFTER INSERT ON audit_log BEGIN {move}; END"
        )
        return
    op.execute(
        "CREATE FUNCTION jobgate_audit_move_head() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"BEGIN {move}; RETURN NULL; END $$"
    )
    op.execute(
        "CREATE TRIGGER audit_log_moves_head AFTER INSERT ON audit_log "
        "FOR EACH ROW EXECUTE FUNCTION jobgate_audit_move_head()"
    )


def _refuse_log_changes() -> None:
    """The log is append-only in the database too; the chain catches what bypasses this."""
    if op.get_bind().dialect.name == "sqlite":
        for verb in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER audit_log_no_{verb.lower()} BEFORE {verb} ON audit_log "
                "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
            )
        return
    op.execute(
        "CREATE FUNCTION jobgate_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$"
    )
    op.execute(
        "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log "
        "FOR EACH ROW EXECUTE FUNCTION jobgate_audit_append_only()"
    )
    op.execute(
        "CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log "
        "FOR EACH STATEMENT EXECUTE FUNCTION jobgate_audit_append_only()"
    )


def downgrade() -> None:
    op.drop_table("audit_head")
    op.drop_table("audit_log")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS jobgate_audit_append_only()")
        op.execute("DROP FUNCTION IF EXISTS jobgate_audit_move_head()")
