"""the history guard is planned afresh for each prune batch (PostgreSQL)

The statement-level guard on `operation_history` DELETEs (revision 0020) asked, in one
query over the removed rows, whether any of their operations still exists or has no
tombstone. Two things made it slow as tombstones piled up. The planner answered `NOT
EXISTS (... operation_tombstones ...)` under an OR with a hashed subplan: a scan of
every tombstone, once per prune batch (32 ms per batch of 100 at 96,000 tombstones, and
growing). And PL/pgSQL keeps a statement's plan for the session: planned at the first
prune batch, when there were no tombstones yet, the probe stayed a sequential scan for
every batch after it, until statistics changed (on a server without autovacuum, never:
a first fix that probed each id in a loop took 0.7 s per batch at 85,000 tombstones).
The guard now asks two plain questions (a join for "still exists", an anti-join for "no
tombstone"), planned afresh at every statement (`EXECUTE`) with the removed rows' true
count: about 2 ms per batch whatever the count (docs/performance.md, "Growth"). What it
allows and refuses is unchanged.

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
    "DECLARE refused boolean; "
    "BEGIN EXECUTE 'SELECT EXISTS (SELECT 1 FROM gone_rows g JOIN operations o "
    "ON o.id = g.operation_id) OR EXISTS (SELECT 1 FROM gone_rows g WHERE NOT EXISTS "
    "(SELECT 1 FROM operation_tombstones t WHERE t.operation_id = g.operation_id))' "
    "INTO refused; "
    "IF refused THEN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END IF; "
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
