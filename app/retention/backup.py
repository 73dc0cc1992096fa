"""`jobgate backup DIR`: a consistent copy of the store that works as a
`JOBGATE_DATA_DIR` as it is (docs/operations.md, "Backup and restore").

SQLite: the online backup API (`sqlite3.Connection.backup`) copies the database in one
step, from one read snapshot: writers go on meanwhile (WAL), and the copy is the
database as of one moment. Then the stored result files are copied: each is written
before the row that names it commits, so every file the copy names exists by then.
PostgreSQL: the database is the server's to dump (`pg_dump`, printed with the URL,
password hidden), and the result files are copied the same way.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import make_url

from app.core.config import Settings
from app.core.db.database import is_sqlite, sqlite_path

DATABASE_FILE = "jobgate.db"  # what the SQLite default opens in a data dir


class BackupRefused(Exception):
    """The backup cannot be written as asked (exit 2); the message is one line."""


@dataclass(frozen=True)
class Backup:
    database_bytes: int  # 0: the database is not in the copy (PostgreSQL)
    operations: int
    result_files: int
    instructions: str = ""  # what to run for the database, when it is not copied


def _sqlite_copy(source: Path, target: Path) -> tuple[int, int]:
    src = sqlite3.connect(source, timeout=30)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)  # all pages in one step: one snapshot, writers not blocked
            operations = int(dst.execute("SELECT count(*) FROM operations").fetchone()[0])
        finally:
            dst.close()
    finally:
        src.close()
    return target.stat().st_size, operations


def copy_results(data_dir: Path, dest: Path, on_file: Callable[[int], None] | None = None) -> int:
    """Copy `<data_dir>/results` to `<dest>/results` (content-addressed, write-once: a
    file already there is the same file); returns how many files are in the copy."""
    source = data_dir / "results"
    n = 0
    if not source.is_dir():
        return 0
    for path in sorted(source.rglob("*.json")):
        target = dest / "results" / path.relative_to(source)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        n += 1
        if on_file is not None:
            on_file(n)
    return n


def pg_dump_instructions(database_url: str, dest: Path) -> str:
    shown = make_url(database_url).set(drivername="postgresql")
    url = shown.render_as_string(hide_password=True)
    return (
        "PostgreSQL is backed up by the server's own tools; run, as the database's owner:\n"
        f"  pg_dump --format=custom --file {dest / 'jobgate.dump'} '{url}'\n"
        "and restore with:\n"
        f"  pg_restore --clean --if-exists --dbname '<new database URL>' {dest / 'jobgate.dump'}\n"
        "(a password, if the URL has one, is not shown: give it with PGPASSWORD or ~/.pgpass)"
    )


def backup(settings: Settings, dest: Path) -> Backup:
    """Write the backup into `dest` (created; it must hold no database already)."""
    if dest.resolve() == settings.data_dir.resolve():
        raise BackupRefused(f"{dest} is the data directory itself: back up somewhere else")
    target = dest / DATABASE_FILE
    if target.exists():
        raise BackupRefused(f"{target} exists: back up into a new or empty directory")
    dest.mkdir(parents=True, exist_ok=True)
    if not is_sqlite(settings.database_url):
        files = copy_results(settings.data_dir, dest)
        return Backup(0, 0, files, pg_dump_instructions(settings.database_url, dest))
    source = Path(sqlite_path(settings.database_url))
    if not source.exists():
        raise BackupRefused(f"no database file at {source}")
    size, operations = _sqlite_copy(source, target)
    files = copy_results(settings.data_dir, dest)  # after the snapshot: it names no newer file
    return Backup(size, operations, files)
