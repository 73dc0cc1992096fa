"""the status and cancel URLs a provider's create answer named (profile language v2)

Revision ID: 0007
Revises: 0006_audit_log
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006_audit_log"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL (every row before this, and providers that name no URL): the path templates.
    op.add_column("operations", sa.Column("remote_status_url", sa.String(), nullable=True))
    op.add_column("operations", sa.Column("remote_cancel_url", sa.String(), nullable=True))


def downgrade() -> None:
    op.drop_column("operations", "remote_cancel_url")
    op.drop_column("operations", "remote_status_url")
