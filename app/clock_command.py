"""`jobgate clock`: the reference clock this host's processes count from, and the host's
offset from it; `--adopt-host` re-takes SQLite's anchor from the host's clock now
(docs/operations.md, "Clocks").

Exit codes: 0 the host is within the bound of the reference (or the anchor was re-taken),
1 the host is beyond it (every process on this host claims nothing), 2 refused (nothing to
adopt: PostgreSQL, or no anchor on this platform), 3 the database is not at the head
migration (or cannot be read).
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # imported when the command runs: the parser is built for every command
    from app.core.config import Settings
    from app.core.db import host_anchor
    from app.core.db.database import Database

ACTOR = "cli:clock"


def _at(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds")


def _offset_words(offset: float, limit: float) -> tuple[str, bool]:
    """The host's offset (host minus reference) in words, and whether it is in bound."""
    within = abs(offset) <= limit
    verdict = "within" if within else "BEYOND"
    return (
        f"this host's clock is {offset:+.3f} s off the reference, {verdict} the bound of "
        f"{limit:g} s (JOBGATE_CLOCK_SKEW_LIMIT_SECONDS)",
        within,
    )


async def _postgres(settings: Settings, db: Database, adopt: bool, out: TextIO) -> int:
    from app.core.db.db_clock import DatabaseClock
    from app.core.runtime.clock import SystemClock

    if adopt:
        print(
            "jobgate: on PostgreSQL the reference is the database's own clock "
            "(clock_timestamp()); there is no anchor to re-take: set this host's clock "
            "right (NTP) instead",
            file=out,
        )
        return 2
    clock = DatabaseClock(SystemClock(), limit_seconds=settings.clock_skew_limit_seconds)
    offset = -(await clock.measure(db))
    print("reference: the database's clock (PostgreSQL clock_timestamp())", file=out)
    words, within = _offset_words(offset, settings.clock_skew_limit_seconds)
    print(words, file=out)
    return 0 if within else 1


async def run(settings: Settings, *, adopt: bool, out: TextIO) -> int:
    """What `jobgate clock [--adopt-host]` prints and returns."""
    from app.audit import trail
    from app.core.db import host_anchor
    from app.core.runtime.clock import SystemClock

    db = trail.audited_database(settings)
    try:
        if not db.is_sqlite:
            return await _postgres(settings, db, adopt, out)
        boot_id, boottime = host_anchor.read_boot_id(), host_anchor.read_boottime()
        if boot_id is None or boottime is None:
            print(
                "reference: this host's own clock (no boot id or no CLOCK_BOOTTIME here, "
                "so no anchor): a step of it moves every process's time",
                file=out,
            )
            return 2 if adopt else 0
        wall = SystemClock().now()
        limit = settings.clock_skew_limit_seconds
        anchor = await host_anchor.read_anchor(db, boot_id)
        if adopt:
            return await _adopt(db, anchor, boot_id, wall, boottime, out)
        print(f"reference: this boot's clock anchor (SQLite), boot {boot_id}", file=out)
        if anchor is None:
            print(
                "no anchor taken yet: the first process to measure takes it from this host's clock",
                file=out,
            )
            return 0
        reference = anchor.at(boottime)
        print(
            f"anchor: {_at(anchor.wall)} at CLOCK_BOOTTIME {anchor.boottime:.3f} s\n"
            f"reference now: {_at(reference)}\nhost now:      {_at(wall)}",
            file=out,
        )
        words, within = _offset_words((wall - reference).total_seconds(), limit)
        print(words, file=out)
        if not within:
            print(
                "every process on this database claims nothing until the host's clock is "
                "set right; if the host's clock IS right (the anchor was taken while it was "
                "wrong), run `jobgate clock --adopt-host`",
                file=out,
            )
        return 0 if within else 1
    finally:
        await db.dispose()


async def _adopt(
    db: Database,
    was: host_anchor.Anchor | None,
    boot_id: str,
    wall: datetime,
    boottime: float,
    out: TextIO,
) -> int:
    from app.audit import trail
    from app.core.db import host_anchor
    from app.core.db.txn import Txn

    moved = 0.0 if was is None else (wall - was.at(boottime)).total_seconds()

    def record(txn: Txn) -> None:
        trail.record(
            txn,
            kind="clock_anchor_adopted",
            at=wall,
            actor=ACTOR,
            payload={
                "boot_id": boot_id,
                "was": None if was is None else _at(was.at(boottime)),
                "now": _at(wall),
                "moved_seconds": round(moved, 3),
            },
        )

    await host_anchor.adopt_host(db, boot_id, wall, boottime, also=record)
    print(
        f"the clock anchor of boot {boot_id} is re-taken from this host's clock: "
        f"{_at(wall)} (the reference moved {moved:+.3f} s)",
        file=out,
    )
    print(
        "Leases, due times and deadlines already stored now count from the new time: each "
        f"falls due {abs(moved):.3f} s {'sooner' if moved >= 0 else 'later'} in real time "
        "than it did. Running processes take the new anchor at their next measurement "
        "(JOBGATE_CLOCK_CHECK_SECONDS).",
        file=out,
    )
    return 0


def cli(adopt: bool) -> int:
    """`jobgate clock [--adopt-host]`: prints to stdout, returns the exit code."""
    import sys

    from app.core.config import Settings
    from app.core.db.schema_state import check_sync

    settings = Settings()
    state = check_sync(settings.database_url)
    if not state.ready:
        print(f"jobgate: {state.reason}", file=sys.stderr)  # noqa: T201
        return 3
    return asyncio.run(run(settings, adopt=adopt, out=sys.stdout))


def _command(args: argparse.Namespace) -> int:
    return cli(args.adopt_host)


def add_parser(sub: Any) -> None:
    """Register `jobgate clock [--adopt-host]` on the top-level subparsers."""
    clock = sub.add_parser(
        "clock",
        help="the reference clock and this host's offset from it; exit 1 beyond the bound "
        "(docs/operations.md, Clocks)",
    )
    clock.add_argument(
        "--adopt-host",
        action="store_true",
        help="SQLite: re-take this boot's clock anchor from the host's clock now (stored "
        "leases, due times and deadlines then count from the new time)",
    )
    clock.set_defaults(func=_command)
