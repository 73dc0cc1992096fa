"""clock anchor: SQLite's reference clock, one row per boot of the host (docs/operations.md)

A SQLite database has no clock of its own; the first process of a boot writes the host's
wall time and CLOCK_BOOTTIME here, and every process counts its time from that row, so a
wall clock stepped later cannot move it (app/core/db/host_anchor.py). PostgreSQL has its
own clock and never writes the table; it is created there too so the chain stays one line.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

from app.core.db.types import UTCDateTime

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "clock_anchor",
        # The kernel's id of the boot (/proc/sys/kernel/random/boot_id).
        sa.Column("boot_id", sa.String(), primary_key=True),
        sa.Column("wall", UTCDateTime(), nullable=False),
        # CLOCK_BOOTTIME (seconds since the boot) when `wall` was read.
        sa.Column("boottime", sa.Float(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("clock_anchor")
