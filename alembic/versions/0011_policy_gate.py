"""the policy's cost of each create and its approval gate (docs/policy.md)

`cost`: the cost units the policy charged the create (NULL: created without a policy, or
before this); budgets sum it per key and UTC day, and a create that was never sent (its
approval denied or expired) is charged 0. `gate`: the approval gate's record (the rule,
who asked, the cost, the deadline, and once decided: approved, denied or expired, by whom
and why). The index serves the per-key counts the policy reads at every create.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("operations", sa.Column("cost", sa.Float(), nullable=True))
    op.add_column("operations", sa.Column("gate", sa.JSON(), nullable=True))
    op.create_index("ix_operations_principal_created", "operations", ["principal", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_operations_principal_created", table_name="operations")
    op.drop_column("operations", "gate")
    op.drop_column("operations", "cost")
