"""`jobgate prune` and `jobgate backup`: what they print and their exit codes (0 done, 2
refused input).

Prune prints a count, and a bar on a terminal, redrawn after each batch."""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from app.core.config import Settings
from app.core.runtime.clock import SystemClock
from app.results.store import ResultStore
from app.retention.durations import parse_duration
from app.retention.prune import Plan, Tally, count_prunable, prune_all

BAR_WIDTH = 30


def bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    """`[#####.....]  50/100` (a full bar when the total was an estimate and is passed)."""
    filled = width if total <= 0 or done >= total else done * width // total
    return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{max(total, done)}"


def summary(tally: Tally, older_than: str) -> str:
    text = (
        f"pruned {tally.operations} finished operations older than {older_than}: "
        f"{tally.history} history rows, {tally.result_items} result items, "
        f"{tally.files} stored result files, {tally.callbacks} callbacks, "
        f"{tally.webhook_events} webhook events; {tally.audit_entries} audit entries"
    )
    if tally.audit_checkpoint:
        text += f" (the audit checkpoint is at entry {tally.audit_checkpoint})"
    if tally.tombstones_expired:
        text += f"; {tally.tombstones_expired} expired tombstones removed"
    return text


async def run(settings: Settings, older_than: str, *, dry_run: bool, out: TextIO) -> int:
    from app.audit.trail import audited_database
    from app.core.db.db_clock import DatabaseClock

    seconds = parse_duration(older_than)
    db = audited_database(settings)
    try:
        clock = DatabaseClock(SystemClock(), limit_seconds=settings.clock_skew_limit_seconds)
        await clock.measure(db)  # the database's time, as every writer's
        now = clock.now()
        plan = Plan(
            now=now,
            retention_seconds=seconds,
            tombstone_seconds=settings.tombstone_retention_seconds,
            batch=settings.prune_batch,
            signing_key=settings.audit_signing_key,
            actor="cli:prune",
        )
        total = await count_prunable(db, plan)
        if dry_run:
            print(
                f"would prune {total} finished operations older than {older_than} "
                f"(finished before {plan.cutoff.isoformat(timespec='seconds')}); "
                "nothing was removed",
                file=out,
            )
            return 0
        tty = out.isatty()

        def progress(so_far: Tally) -> None:
            if tty:
                print(f"\r{bar(so_far.operations, total)}", end="", file=out, flush=True)

        tally = await prune_all(db, ResultStore(settings.data_dir), plan, progress)
        if tty:
            print(file=out)
        print(summary(tally, older_than), file=out)
        return 0
    finally:
        await db.dispose()


def cli(older_than: str, *, dry_run: bool) -> int:
    try:
        parse_duration(older_than)
    except ValueError as exc:
        print(f"jobgate: --older-than: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(run(Settings(), older_than, dry_run=dry_run, out=sys.stdout))


def backup_cli(dest: str) -> int:
    """`jobgate backup DIR` (docs/operations.md, "Backup and restore")."""
    from pathlib import Path

    from app.retention.backup import BackupRefused, backup

    settings = Settings()
    try:
        done = backup(settings, Path(dest))
    except (BackupRefused, OSError) as exc:
        print(f"jobgate: backup: {exc}", file=sys.stderr)
        return 2
    if done.instructions:
        print(done.instructions)
        print(f"copied {done.result_files} stored result files to {dest}/results")
        return 0
    print(
        f"backed up the database ({done.database_bytes} bytes, {done.operations} operations) "
        f"and {done.result_files} stored result files to {dest}; it is a data directory as "
        f"it is: JOBGATE_DATA_DIR={dest} jobgate serve"
    )
    return 0
