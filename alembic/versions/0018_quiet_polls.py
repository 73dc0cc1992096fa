"""polls that changed nothing, counted instead of written (docs/architecture.md)

`quiet_polls`: status reads since the last recorded change that saw the same remote
state and progress; `quiet_last_at`: when the last of them was made. The next change
writes one history row for them and resets both.

Revision ID: 0018
Revises: 0011
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

from app.core.db.types import UTCDateTime

revision = "0018"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "operations",
        sa.Column("quiet_polls", sa.Integer(), nullable=False, server_default="0"),
    )
    op.add_column("operations", sa.Column("quiet_last_at", UTCDateTime(), nullable=True))


def downgrade() -> None:
    op.drop_column("operations", "quiet_last_at")
    op.drop_column("operations", "quiet_polls")
