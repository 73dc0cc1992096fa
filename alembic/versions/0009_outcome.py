"""the outcome table's verdict for a finished job, kept on the row (`outcome`)

`succeeded` and `completed_with_errors` share the state `succeeded`; which one it is was
read from `result_summary` alone, so a provider that said "partly succeeded" without
counting its items could only be shown as a success. The verdict is now stored.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL: not finished, or a state whose outcome is the state itself (failed, cancelled).
    op.add_column("operations", sa.Column("outcome", sa.String(), nullable=True))
    ops = sa.table("operations", sa.column("id"), sa.column("state"),
                   sa.column("result_summary", sa.JSON()), sa.column("outcome"))  # fmt: skip
    partial = sa.or_(
        ops.c.result_summary["failed"].as_integer() > 0,
        ops.c.result_summary["not_processed"].as_integer() > 0,
    )
    done = ops.c.state == "succeeded"
    op.execute(ops.update().where(done, partial).values(outcome="completed_with_errors"))
    op.execute(ops.update().where(done, ops.c.outcome.is_(None)).values(outcome="succeeded"))


def downgrade() -> None:
    op.drop_column("operations", "outcome")
