"""the agent's result checks, sent beside `input` (never inside it, never to the provider)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL (every row before this, and creates that ask for no checks): the profile's checks.
    op.add_column("operations", sa.Column("validation", sa.JSON(), nullable=True))
    # Operations created before this read their checks from `input.validation`: copy them
    # over, so an operation in flight keeps the checks it was created with.
    ops = sa.table("operations", sa.column("id"), sa.column("validation", sa.JSON()))
    bind = op.get_bind()
    for op_id, raw in bind.execute(sa.text("SELECT id, input FROM operations")):
        given = json.loads(raw) if isinstance(raw, str) else raw
        asked = given.get("validation") if isinstance(given, dict) else None
        if isinstance(asked, dict) and asked:
            bind.execute(ops.update().where(ops.c.id == op_id).values(validation=asked))


def downgrade() -> None:
    op.drop_column("operations", "validation")
