"""operations.single_create: how a single remote job was promised at intake

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # token | lookup | none. Rows from before it promised nothing: 'none' never resends.
    with op.batch_alter_table("operations") as batch:
        batch.add_column(
            sa.Column("single_create", sa.String(), nullable=False, server_default="none")
        )


def downgrade() -> None:
    with op.batch_alter_table("operations") as batch:
        batch.drop_column("single_create")
