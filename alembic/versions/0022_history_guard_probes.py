"""the history guard probes each removed operation by its keys (PostgreSQL)

The statement-level guard on `operation_history` DELETEs (revision 0020) asked, in one
query over the removed rows, whether any of their operations still exists or has no
tombstone. The planner answers `NOT EXISTS (... operation_tombstones ...)` over a
transition table with a hashed subplan: a scan of every tombstone, once per prune batch.
The prune therefore slowed as tombstones piled up (32 ms of guard per batch of 100 at
96,000 tombstones, and growing). The guard now looks up each removed operation id by its
primary keys, once per distinct id: 1.5 ms for the same batch, whatever the count
(docs/performance.md, "Growth"). What it allows and refuses is unchanged.

The prune removes history and audit rows by operation id. A whole operation's rows lie
together on disk, so ANALYZE's sample sees few distinct ids and underestimates them (a
million operations' history read as about 260,000 distinct ids, so 3.5 times the rows
expected per id). The column now declares its proportion: about one distinct id per ten
rows. (Without any statistics, as on a server with autovacuum off and no ANALYZE, the
planner expects half the table for a batch and scans all of it: see docs/operations.md,
"Retention".)

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07
"""

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

_PROBES = (
    "CREATE OR REPLACE FUNCTION jobgate_history_guard() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "DECLARE gone text; "
    "BEGIN FOR gone IN SELECT DISTINCT operation_id FROM gone_rows LOOP "
    "IF EXISTS (SELECT 1 FROM operations WHERE id = gone) OR NOT EXISTS "
    "(SELECT 1 FROM operation_tombstones WHERE operation_id = gone) THEN "
    "RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END IF; END LOOP; "
    "RETURN NULL; END $$"
)
_ONE_QUERY = (
    "CREATE OR REPLACE FUNCTION jobgate_history_guard() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN IF EXISTS (SELECT 1 FROM gone_rows g WHERE "
    "EXISTS (SELECT 1 FROM operations WHERE id = g.operation_id) OR NOT EXISTS "
    "(SELECT 1 FROM operation_tombstones WHERE operation_id = g.operation_id)) THEN "
    "RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END IF; RETURN NULL; END $$"
)


_BY_OPERATION = ("operation_history", "audit_log")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":  # its row trigger probes by key already
        return
    op.execute(_PROBES)
    for table in _BY_OPERATION:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN operation_id SET (n_distinct = -0.1)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    op.execute(_ONE_QUERY)
    for table in _BY_OPERATION:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN operation_id RESET (n_distinct)")
