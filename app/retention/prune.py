"""Pruning: finished operations older than the cutoff go, each leaving a tombstone, in
short transactions of `batch` operations (docs/operations.md, "Retention").

One batch is one transaction: the tombstones, the operations, their history, result
items, delivered callbacks (with their attempts) and webhook events, and one audit entry
saying what was pruned. Stored result files go after it commits, each once no kept
operation names it. The audit chain's prefix is checkpointed in a transaction of its
own (app/retention/audit_prefix.py), and expired tombstones in another.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, text

from app.audit import trail
from app.core.db.database import Database
from app.operations.repository import retention as repo
from app.results.store import ResultStore
from app.retention import audit_prefix

log = logging.getLogger(__name__)

AUDIT_ENTRIES_PER_OPERATION = 20  # how far one pass may move the audit checkpoint, per op

_IDS: Any = bindparam("ids", expanding=True)
_CALLBACK_ATTEMPTS = text(
    "DELETE FROM callback_attempts WHERE outbox_id IN "
    "(SELECT id FROM callback_outbox WHERE operation_id IN :ids)"
).bindparams(_IDS)
_CALLBACKS = text("DELETE FROM callback_outbox WHERE operation_id IN :ids").bindparams(_IDS)
_WEBHOOK_EVENTS = text("DELETE FROM webhook_events WHERE operation_id IN :ids").bindparams(_IDS)


@dataclass(frozen=True)
class Tally:
    """What a prune removed (or, on a dry run, would remove: `operations` alone)."""

    operations: int = 0
    history: int = 0
    result_items: int = 0
    callbacks: int = 0
    webhook_events: int = 0
    files: int = 0
    audit_entries: int = 0
    audit_checkpoint: int = 0  # the checkpoint's seq after it (0: none)
    tombstones_expired: int = 0
    ids: tuple[str, ...] = field(default=(), repr=False)

    def __add__(self, other: Tally) -> Tally:
        summed = {f: getattr(self, f) + getattr(other, f) for f in _SUMMED}
        return Tally(**summed, audit_checkpoint=max(self.audit_checkpoint, other.audit_checkpoint))


_SUMMED = ("operations", "history", "result_items", "callbacks", "webhook_events", "files",
           "audit_entries")  # fmt: skip


@dataclass(frozen=True)
class Plan:
    """When to cut, from the settings and a clock."""

    now: datetime
    retention_seconds: float
    tombstone_seconds: float = 0.0
    batch: int = 100
    signing_key: str | None = None
    actor: str = "retention"

    @property
    def cutoff(self) -> datetime:
        return self.now - timedelta(seconds=self.retention_seconds)

    @property
    def tombstone_cutoff(self) -> datetime | None:
        if not self.tombstone_seconds:
            return None
        return self.now - timedelta(seconds=self.tombstone_seconds)


async def prune_operations(db: Database, store: ResultStore, plan: Plan) -> Tally:
    """One batch: at most `plan.batch` operations, one transaction."""
    async with db.transaction() as txn:
        ops = await repo.prunable(txn, plan.cutoff, plan.batch, skip_locked=True)
        if not ops:
            return Tally()
        removed = await repo.remove(txn, ops, plan.now)
        ids = [o.id for o in ops]
        await txn.execute(_CALLBACK_ATTEMPTS, {"ids": ids})
        callbacks = await txn.execute(_CALLBACKS, {"ids": ids})
        events = await txn.execute(_WEBHOOK_EVENTS, {"ids": ids})
        trail.record(
            txn,
            kind="retention_prune",
            at=plan.now,
            actor=plan.actor,
            payload={
                "operations": ids,
                "cutoff": plan.cutoff.isoformat(),
                "history_rows": removed.history,
                "result_items": removed.result_items,
            },
        )
    files = await _remove_files(db, store, {o.result_ref for o in ops if o.result_ref})
    return Tally(
        operations=removed.operations,
        history=removed.history,
        result_items=removed.result_items,
        callbacks=callbacks.rowcount,
        webhook_events=events.rowcount,
        files=files,
        ids=tuple(ids),
    )


async def _remove_files(db: Database, store: ResultStore, refs: set[str]) -> int:
    removed = 0
    for ref in sorted(refs):
        async with db.read() as txn:
            if await repo.still_named(txn, ref):
                continue
        try:
            removed += store.remove(ref)
        except OSError as exc:  # the row is gone; a file left behind is only space
            log.warning("could not remove the stored result %s: %s", ref, exc)
    return removed


async def checkpoint_audit(db: Database, plan: Plan) -> Tally:
    """Move the audit checkpoint over what the pruned operations left at the chain's start."""
    async with db.transaction() as txn:
        done = await audit_prefix.checkpoint_prefix(
            txn,
            cutoff=plan.cutoff,
            now=plan.now,
            limit=plan.batch * AUDIT_ENTRIES_PER_OPERATION,
            signing_key=plan.signing_key,
        )
    return Tally(audit_entries=done.removed, audit_checkpoint=done.seq)


async def expire_tombstones(db: Database, plan: Plan) -> int:
    cutoff = plan.tombstone_cutoff
    if cutoff is None:
        return 0
    async with db.transaction() as txn:
        return await repo.expire_tombstones(txn, cutoff, plan.batch)


async def prune_step(db: Database, store: ResultStore, plan: Plan) -> Tally:
    """One step of continuous pruning (the observer's): one batch of operations, the
    audit prefix after it, one batch of expired tombstones."""
    tally = await prune_operations(db, store, plan)
    tally = tally + await checkpoint_audit(db, plan)
    return replace(tally, tombstones_expired=await expire_tombstones(db, plan))


async def count_prunable(db: Database, plan: Plan) -> int:
    async with db.read() as txn:
        return await repo.count_prunable(txn, plan.cutoff)


async def prune_all(
    db: Database,
    store: ResultStore,
    plan: Plan,
    on_batch: Callable[[Tally], None] | None = None,
) -> Tally:
    """Batches until none is left older than the cutoff, then the audit prefix and
    expired tombstones, each in batches too."""
    total = Tally()
    while True:
        step = await prune_operations(db, store, plan)
        total = total + step
        if on_batch is not None:
            on_batch(total)
        if step.operations < plan.batch:
            break
    while True:
        audit = await checkpoint_audit(db, plan)
        total = total + audit
        if audit.audit_entries == 0:
            break
    expired = 0
    while True:
        n = await expire_tombstones(db, plan)
        expired += n
        if n < plan.batch:
            break
    return replace(total, tombstones_expired=expired)
