"""audit_head is guarded like the log: never deleted, truncated, re-inserted or moved back

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03

Without this, deleting the one head row turned the trail off: every append reads the
head to chain after it, so with no head it inserted nothing and said nothing. Now the
row cannot be deleted (or truncated, or a second one inserted), and an UPDATE may only
move it forward to an entry that exists, or re-sign it where it is. Whoever disables
these triggers is still caught: the append fails loudly without a head
(app/audit/trail.py), verify reports a missing head, and an anchor kept outside the
database catches a head moved back (docs/audit.md).
"""

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

# The one rule for an UPDATE of the head, in SQL both databases read.
_BAD_MOVE = (
    "NEW.id <> OLD.id OR NEW.seq < OLD.seq"
    " OR (NEW.seq = OLD.seq AND NEW.hash <> OLD.hash)"
    " OR (NEW.seq > OLD.seq AND NOT EXISTS"
    " (SELECT 1 FROM audit_log WHERE seq = NEW.seq AND hash = NEW.hash))"
)
_SQLITE_TRIGGERS = ("audit_head_no_delete", "audit_head_no_insert", "audit_head_forward_only")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name, when in (
            ("audit_head_no_delete", "BEFORE DELETE ON audit_head"),
            ("audit_head_no_insert", "BEFORE INSERT ON audit_head"),
        ):
            op.execute(
                f"CREATE TRIGGER {name} {when} "
                "BEGIN SELECT RAISE(ABORT, 'audit_head is guarded: one row, moved forward only'); "
                "END"
            )
        op.execute(
            "CREATE TRIGGER audit_head_forward_only BEFORE UPDATE ON audit_head "
            f"WHEN {_BAD_MOVE} "
            "BEGIN SELECT RAISE(ABORT, 'audit_head moves forward only, to an entry of audit_log'); "
            "END"
        )
        return
    op.execute(
        "CREATE FUNCTION jobgate_audit_head_guard() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN "
        "IF TG_OP = 'UPDATE' THEN "
        f"  IF {_BAD_MOVE} THEN "
        "    RAISE EXCEPTION 'audit_head moves forward only, to an entry of audit_log'; "
        "  END IF; "
        "  RETURN NEW; "
        "END IF; "
        "RAISE EXCEPTION 'audit_head is guarded: one row, moved forward only (%)', TG_OP; "
        "END $$"
    )
    op.execute(
        "CREATE TRIGGER audit_head_guard BEFORE INSERT OR UPDATE OR DELETE ON audit_head "
        "FOR EACH ROW EXECUTE FUNCTION jobgate_audit_head_guard()"
    )
    op.execute(
        "CREATE TRIGGER audit_head_no_truncate BEFORE TRUNCATE ON audit_head "
        "FOR EACH STATEMENT EXECUTE FUNCTION jobgate_audit_head_guard()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in _SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        return
    op.execute("DROP TRIGGER IF EXISTS audit_head_no_truncate ON audit_head")
    op.execute("DROP TRIGGER IF EXISTS audit_head_guard ON audit_head")
    op.execute("DROP FUNCTION IF EXISTS jobgate_audit_head_guard()")
