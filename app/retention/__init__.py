"""Retention: pruning finished operations after `JOBGATE_RETENTION_SECONDS` (leaving
tombstones that keep their keys), checkpointing the audit chain's pruned prefix, and the
consistent backup (docs/operations.md, "Retention" and "Backup and restore").

Sits above `app.operations` (whose repository owns the operations' SQL) and below the
edges: the observer prunes in small batches, and `jobgate prune` / `jobgate backup`
run it from the command line. The callback and webhook tables belong to rooms beside
the observer, so their rows are deleted here by table name.
"""
