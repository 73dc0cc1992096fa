"""one operation per remote job (a unique index), and reads that keep failing counted

`uq_operations_remote_job`, on (provider, remote_job_id):

Two operations must never follow one job (docs/operations.md, "accept_job"). The
resolve checks it before it writes, and this index holds it when two decisions bind
one job at the same moment: the second write is refused. Partial: rows without a job
id yet are not in it. The plain index it replaces served the same lookups.

An upgrade over rows that already break the rule stops, naming them, and changes
nothing: a person decides which operation follows the job (abandon the other).

`read_failures`, `read_failure`, `read_failing_since`: status or result reads in a row
the provider refused the same way, the refusal, and when the first was answered: after
JOBGATE_READ_FAILURES_TO_PERSON of them a person decides (docs/operations.md, "Reads that
keep failing").

`errors_listed`: how many failed items `/errors` lists (the result_items rows, counted
for the rows already there), so no message points at an empty list.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

from app.core.db.types import UTCDateTime

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

WHERE = "remote_job_id IS NOT NULL"


def upgrade() -> None:
    op.add_column(
        "operations",
        sa.Column("read_failures", sa.Integer(), nullable=False, server_default="0"),
    )
    op.add_column("operations", sa.Column("read_failure", sa.String(), nullable=True))
    op.add_column("operations", sa.Column("read_failing_since", UTCDateTime(), nullable=True))
    op.add_column(
        "operations",
        sa.Column("errors_listed", sa.Integer(), nullable=False, server_default="0"),
    )
    op.execute(
        "UPDATE operations SET errors_listed = (SELECT COUNT(*) FROM result_items "
        "WHERE result_items.operation_id = operations.id)"
    )
    twice = op.get_bind().execute(
        sa.text(
            "SELECT provider, remote_job_id, COUNT(*) FROM operations "
            f"WHERE {WHERE} GROUP BY provider, remote_job_id HAVING COUNT(*) > 1"
        )
    ).all()
    if twice:
        named = "; ".join(f"{p} {j} ({n} operations)" for p, j, n in twice[:10])
        raise RuntimeError(
            f"jobs followed by more than one operation: {named}. Abandon all but one "
            "of each (jobgate ops resolve --decision abandon), then migrate again."
        )
    op.drop_index("ix_operations_remote", table_name="operations")
    op.create_index(
        "uq_operations_remote_job",
        "operations",
        ["provider", "remote_job_id"],
        unique=True,
        sqlite_where=sa.text(WHERE),
        postgresql_where=sa.text(WHERE),
    )


def downgrade() -> None:
    op.drop_index("uq_operations_remote_job", table_name="operations")
    op.create_index("ix_operations_remote", "operations", ["provider", "remote_job_id"])
    op.drop_column("operations", "errors_listed")
    op.drop_column("operations", "read_failing_since")
    op.drop_column("operations", "read_failure")
    op.drop_column("operations", "read_failures")
