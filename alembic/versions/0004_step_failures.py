"""count consecutive step failures per operation (the `stalled` state)

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Exceptions the gateway's own steps raised in a row; reset by any applied step.
    op.add_column(
        "operations",
        sa.Column("step_failures", sa.Integer(), nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_column("operations", "step_failures")
