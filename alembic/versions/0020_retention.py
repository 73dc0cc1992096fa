"""retention: tombstones of pruned operations, audit checkpoints, guarded deletes

`operation_tombstones`: what is left of a pruned operation (its key, principal,
fingerprint, id, outcome and when it finished), so a replay of its key is answered
`410 operation_pruned` instead of starting the work again. `audit_checkpoints`: where a
pruned prefix of the audit chain ended (seq, hash, count, HMAC), append-only.

History stays append-only for every operation that exists: a DELETE is allowed only of
the rows of an operation that is gone and has a tombstone (the prune writes the
tombstone and deletes the operation first, in one transaction). An audit entry may be
deleted only when a checkpoint covers it. TRUNCATE and UPDATE are refused as before
(docs/operations.md, "Retention").

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

from app.core.db.types import UTCDateTime

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

_HISTORY_KEPT = (
    "EXISTS (SELECT 1 FROM operations WHERE id = OLD.operation_id)"
    " OR NOT EXISTS (SELECT 1 FROM operation_tombstones WHERE operation_id = OLD.operation_id)"
)
_AUDIT_KEPT = "OLD.seq > (SELECT COALESCE(MAX(seq), 0) FROM audit_checkpoints)"


def upgrade() -> None:
    op.create_table(
        "operation_tombstones",
        sa.Column("operation_id", sa.String(), primary_key=True),
        sa.Column("principal", sa.String(), nullable=False),
        sa.Column("idempotency_key", sa.String(), nullable=False),
        sa.Column("fingerprint", sa.String(), nullable=False),
        sa.Column("provider", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=True),
        sa.Column("finished_at", UTCDateTime(), nullable=False),
        sa.Column("pruned_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("principal", "idempotency_key", name="uq_tombstones_principal_key"),
    )
    op.create_index("ix_operation_tombstones_finished_at", "operation_tombstones", ["finished_at"])
    op.create_table(
        "audit_checkpoints",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=False,
        ),
        sa.Column("hash", sa.String(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("signature", sa.String(), nullable=True),
    )
    # The prune's scan: finished operations, oldest change first.
    op.create_index("ix_operations_state_updated", "operations", ["state", "updated_at"])
    # A list by state or status, newest first, reads its page off this index instead of
    # sorting every row in the state (docs/performance.md, "Growth").
    op.create_index(
        "ix_operations_state_created", "operations", ["state", "created_at", "id"]
    )
    # A stored result file is removed with the last operation that names it.
    op.create_index(
        "ix_operations_result_ref",
        "operations",
        ["result_ref"],
        sqlite_where=sa.text("result_ref IS NOT NULL"),
        postgresql_where=sa.text("result_ref IS NOT NULL"),
    )
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_guards()
    else:
        _pg_guards()


def _sqlite_guards() -> None:
    op.execute("DROP TRIGGER operation_history_no_delete")
    op.execute(
        "CREATE TRIGGER operation_history_no_delete BEFORE DELETE ON operation_history "
        f"WHEN {_HISTORY_KEPT} "
        "BEGIN SELECT RAISE(ABORT, 'operation_history is append-only'); END"
    )
    op.execute("DROP TRIGGER audit_log_no_delete")
    op.execute(
        "CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log "
        f"WHEN {_AUDIT_KEPT} "
        "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
    )
    for verb in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER audit_checkpoints_no_{verb.lower()} "
            f"BEFORE {verb} ON audit_checkpoints "
            "BEGIN SELECT RAISE(ABORT, 'audit_checkpoints is append-only'); END"
        )


def _pg_guards() -> None:
    # UPDATE stays refused row by row; a DELETE is checked once per statement over the
    # rows it removed (a transition table): a row trigger cost the prune 0.1 ms a row.
    op.execute(
        "CREATE FUNCTION jobgate_history_guard() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN IF EXISTS (SELECT 1 FROM gone_rows g WHERE "
        "EXISTS (SELECT 1 FROM operations WHERE id = g.operation_id) OR NOT EXISTS "
        "(SELECT 1 FROM operation_tombstones WHERE operation_id = g.operation_id)) THEN "
        "RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END IF; RETURN NULL; END $$"
    )
    op.execute("DROP TRIGGER operation_history_append_only ON operation_history")
    op.execute(
        "CREATE TRIGGER operation_history_append_only BEFORE UPDATE "
        "ON operation_history FOR EACH ROW EXECUTE FUNCTION jobgate_append_only()"
    )
    op.execute(
        "CREATE TRIGGER operation_history_guarded_delete AFTER DELETE ON operation_history "
        "REFERENCING OLD TABLE AS gone_rows "
        "FOR EACH STATEMENT EXECUTE FUNCTION jobgate_history_guard()"
    )
    op.execute(
        "CREATE FUNCTION jobgate_audit_log_guard() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"BEGIN IF TG_OP = 'DELETE' AND NOT ({_AUDIT_KEPT}) THEN RETURN OLD; END IF; "
        "RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$"
    )
    op.execute("DROP TRIGGER audit_log_append_only ON audit_log")
    op.execute(
        "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log "
        "FOR EACH ROW EXECUTE FUNCTION jobgate_audit_log_guard()"
    )
    op.execute(
        "CREATE TRIGGER audit_checkpoints_append_only BEFORE UPDATE OR DELETE "
        "ON audit_checkpoints FOR EACH ROW EXECUTE FUNCTION jobgate_audit_append_only()"
    )
    op.execute(
        "CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints "
        "FOR EACH STATEMENT EXECUTE FUNCTION jobgate_audit_append_only()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER operation_history_no_delete")
        op.execute(
            "CREATE TRIGGER operation_history_no_delete BEFORE DELETE ON operation_history "
            "BEGIN SELECT RAISE(ABORT, 'operation_history is append-only'); END"
        )
        op.execute("DROP TRIGGER audit_log_no_delete")
        op.execute(
            "CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log "
            "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
        )
    else:
        op.execute("DROP TRIGGER operation_history_guarded_delete ON operation_history")
        op.execute("DROP TRIGGER operation_history_append_only ON operation_history")
        op.execute(
            "CREATE TRIGGER operation_history_append_only BEFORE UPDATE OR DELETE "
            "ON operation_history FOR EACH ROW EXECUTE FUNCTION jobgate_append_only()"
        )
        op.execute("DROP TRIGGER audit_log_append_only ON audit_log")
        op.execute(
            "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log "
            "FOR EACH ROW EXECUTE FUNCTION jobgate_audit_append_only()"
        )
        op.execute("DROP FUNCTION jobgate_history_guard()")
        op.execute("DROP FUNCTION jobgate_audit_log_guard()")
    op.drop_index("ix_operations_result_ref", table_name="operations")
    op.drop_index("ix_operations_state_created", table_name="operations")
    op.drop_index("ix_operations_state_updated", table_name="operations")
    op.drop_table("audit_checkpoints")
    op.drop_index("ix_operation_tombstones_finished_at", table_name="operation_tombstones")
    op.drop_table("operation_tombstones")
