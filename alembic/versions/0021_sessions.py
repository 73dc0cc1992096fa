"""operator sessions: a person's sign-in at /login (docs/security.md)

A session stands for one operator key presented once at `/login`; the browser keeps
only a cookie with the session's token, and only the token's SHA-256 is stored here.
It ends at `expires_at`, at a logout (`ended_at`), or when its key is revoked.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

from app.core.db.types import UTCDateTime

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        # Only the sha256 hex of the cookie's token; also the lookup index.
        sa.Column("token_hash", sa.String(), nullable=False),
        sa.Column(
            "key_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            sa.ForeignKey("api_keys.id", name="fk_sessions_key_id"),
            nullable=False,
        ),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("ended_at", UTCDateTime(), nullable=True),
        sa.UniqueConstraint("token_hash", name="uq_sessions_token_hash"),
    )


def downgrade() -> None:
    op.drop_table("sessions")
