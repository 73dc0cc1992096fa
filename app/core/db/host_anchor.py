"""SQLite's reference clock: one time anchor per boot of this host, shared by every process.

A SQLite database is a file on this host, with no clock of its own. The host's wall
clock cannot be the reference: a step of it (`date -s`, a VM resumed, NTP) would be taken
at its word by the next measurement, and every lease, due time and deadline stored before
would be an hour off. So the first process of a boot to measure writes an anchor row: the
host's wall time then, and `CLOCK_BOOTTIME` then (seconds since the boot, suspend
included; a step of the wall clock does not move it, and it is the same in every process
of the boot). Every process then reads that row, and its reference is
`anchor.wall + (boottime now - anchor.boottime)`: a wall clock stepped later shows as an
offset from it, which the database clock refuses as skew (docs/operations.md, "Clocks").

A new boot (a new `/proc/sys/kernel/random/boot_id`) takes a new anchor. Where there is no
boot id or no `CLOCK_BOOTTIME` (not Linux), there is no anchor and the host's clock
stays the reference. `jobgate clock --adopt-host` re-takes the anchor from the host's
clock now, for when the clock was wrong when it was taken.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import sqlite
from sqlmodel import Field, SQLModel

from app.core.db.database import Database
from app.core.db.row_table import table_of
from app.core.db.txn import Txn
from app.core.db.types import UTCDateTime

BOOT_ID_FILE = Path("/proc/sys/kernel/random/boot_id")

BootId = Callable[[], str | None]
Boottime = Callable[[], float | None]


class ClockAnchorRow(SQLModel, table=True):
    """One boot's anchor: the host's wall time when it was taken, and `CLOCK_BOOTTIME`
    at that moment. Only SQLite databases use it (PostgreSQL has its own clock)."""

    __tablename__ = "clock_anchor"

    boot_id: str = Field(primary_key=True)  # the kernel's id of this boot
    wall: datetime = Field(sa_type=UTCDateTime)  # the host's wall time at `boottime`
    boottime: float  # CLOCK_BOOTTIME when taken, seconds
    created_at: datetime = Field(sa_type=UTCDateTime)  # the host's wall time, as `wall`


ANCHORS = table_of(ClockAnchorRow)


def read_boot_id() -> str | None:
    """This boot's id (Linux); None where the kernel has none to give."""
    try:
        return BOOT_ID_FILE.read_text().strip() or None
    except OSError:
        return None


def read_boottime() -> float | None:
    """`CLOCK_BOOTTIME` in seconds; None where the platform has no such clock."""
    clock_id = getattr(time, "CLOCK_BOOTTIME", None)
    if clock_id is None:
        return None
    try:
        return time.clock_gettime(clock_id)
    except OSError:
        return None


@dataclass(frozen=True)
class Anchor:
    """A boot's anchor, as read from its row."""

    boot_id: str
    wall: datetime
    boottime: float
    created_at: datetime

    def at(self, boottime: float) -> datetime:
        """The reference's time when `CLOCK_BOOTTIME` reads `boottime`."""
        return self.wall + timedelta(seconds=boottime - self.boottime)


async def read_anchor(db: Database, boot_id: str) -> Anchor | None:
    """This boot's anchor, if one was taken."""
    stmt = select(ANCHORS.c.boot_id, ANCHORS.c.wall, ANCHORS.c.boottime, ANCHORS.c.created_at)
    async with db.read() as txn:
        row = (await txn.execute(stmt.where(ANCHORS.c.boot_id == boot_id))).first()
    if row is None:
        return None
    return Anchor(str(row.boot_id), row.wall, float(row.boottime), row.created_at)


async def shared_anchor(db: Database, boot_id: str, wall: datetime, boottime: float) -> Anchor:
    """This boot's anchor; the first caller of the boot takes it (`wall`, `boottime`: the
    host's readings now), every later one reads the same row. Anchors of other boots are
    removed when a new one is taken: they can never be read again."""
    anchor = await read_anchor(db, boot_id)
    if anchor is not None:
        return anchor
    values = {"boot_id": boot_id, "wall": wall, "boottime": boottime, "created_at": wall}
    async with db.transaction() as txn:
        # Two first processes of a boot may race here: one row wins, both read it.
        await txn.execute(sqlite.insert(ANCHORS).values(**values).on_conflict_do_nothing())
        await txn.execute(delete(ANCHORS).where(ANCHORS.c.boot_id != boot_id))
    anchor = await read_anchor(db, boot_id)
    assert anchor is not None, boot_id  # inserted or already there; never removed
    return anchor


async def adopt_host(
    db: Database,
    boot_id: str,
    wall: datetime,
    boottime: float,
    *,
    also: Callable[[Txn], None] | None = None,
) -> Anchor:
    """Re-take this boot's anchor from the host's readings now (`jobgate clock
    --adopt-host`): from then on the reference is the host's clock as it reads now.
    `also` runs in the same transaction (the caller's audit entry)."""
    async with db.transaction() as txn:
        if also is not None:
            also(txn)
        moved = await txn.execute(
            update(ANCHORS)
            .where(ANCHORS.c.boot_id == boot_id)
            .values(wall=wall, boottime=boottime, created_at=wall)
        )
        if moved.rowcount == 0:
            values = {"boot_id": boot_id, "wall": wall, "boottime": boottime, "created_at": wall}
            await txn.execute(sqlite.insert(ANCHORS).values(**values))
    anchor = await read_anchor(db, boot_id)
    assert anchor is not None, boot_id
    return anchor
