"""How a failed write is told apart: storage full, database gone, or the gateway's own bug."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Callable
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.exc import OperationalError

from app.core.db.write_faults import StorageFull, Unreachable, kind_of


class PgError(Exception):
    def __init__(self, sqlstate: str) -> None:
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), "storage_full"),
        (StorageFull("the result needs 10 bytes"), "storage_full"),
        (sqlite3.OperationalError("database or disk is full"), "storage_full"),
        (PgError("53100"), "storage_full"),
        (asyncpg.exceptions.DiskFullError("could not extend file"), "storage_full"),
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), "database_unavailable"),
        (PgError("08006"), "database_unavailable"),
        (
            asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
            "database_unavailable",
        ),  # fmt: skip
        (
            OperationalError("SELECT 1", {}, sqlite3.OperationalError("database or disk is full")),
            "storage_full",
        ),  # fmt: skip
        (ValueError("a bug"), None),
        (sqlite3.IntegrityError("UNIQUE constraint failed"), None),
        (PgError("23505"), None),
    ],
)
def test_kind_of(exc: BaseException, kind: str | None) -> None:
    assert kind_of(exc) == kind


def test_a_wrapped_cause_is_found() -> None:
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as inner:
            raise RuntimeError("commit failed") from inner
    except RuntimeError as outer:
        assert kind_of(outer) == "storage_full"


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        # A connection the driver lost under a statement (app/core/db/drivers/pg_conn.py).
        (
            OperationalError("SELECT 1", {}, Exception("closed"), connection_invalidated=True),
            "database_unavailable",
        ),  # fmt: skip
        (
            asyncpg.InternalClientError("cannot switch to state 16; another operation (2) ..."),
            "database_unavailable",
        ),  # fmt: skip
        (
            asyncpg.exceptions.ConnectionDoesNotExistError("closed in the middle of operation"),
            "database_unavailable",
        ),  # fmt: skip
        (asyncpg.exceptions.AdminShutdownError("terminating connection"), "database_unavailable"),
        (Unreachable("cannot connect to the database: timed out"), "database_unavailable"),
        (PgError("53300"), "database_unavailable"),  # too many connections
        (PgError("57P04"), "database_unavailable"),  # database dropped
        (PgError("25P03"), "database_unavailable"),  # idle-in-transaction timeout
        (PgError("40P01"), "database_busy"),  # deadlock
        (PgError("40001"), "database_busy"),  # serialization failure
        (
            ExceptionGroup("a task group", [ValueError("x"), PgError("08006")]),
            "database_unavailable",
        ),
        # Misuse of a live connection is the gateway's bug, not infrastructure.
        (
            asyncpg.InterfaceError("cannot perform operation: another operation is in progress"),
            None,
        ),
        (OperationalError("SELECT 1", {}, Exception("x")), None),
    ],
)
def test_driver_errors_are_classified(exc: BaseException, kind: str | None) -> None:
    assert kind_of(exc) == kind


def _sqlite_error(setup: Callable[[Path], None], path: Path) -> sqlite3.Error:
    try:
        setup(path)
    except sqlite3.Error as err:
        return err
    raise AssertionError("sqlite3 raised nothing")


def _locked(path: Path) -> None:
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        sqlite3.connect(path, timeout=0, isolation_level=None).execute("BEGIN IMMEDIATE")
    finally:
        holder.rollback()


def _read_only(path: Path) -> None:
    sqlite3.connect(path).execute("CREATE TABLE t (x)")
    ro = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ro.execute("INSERT INTO t VALUES (1)")


def _not_a_database(path: Path) -> None:
    path.write_bytes(b"this is no database file, just bytes " * 200)
    sqlite3.connect(path).execute("SELECT * FROM sqlite_master")


def _cannot_open(path: Path) -> None:
    sqlite3.connect(path / "no" / "such" / "dir.db")


def _duplicate(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x PRIMARY KEY)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.execute("INSERT INTO t VALUES (1)")


@pytest.mark.parametrize(
    ("setup", "kind"),
    [
        (_locked, "database_busy"),
        (_read_only, "database_unavailable"),
        (_not_a_database, "database_unavailable"),
        (_cannot_open, "database_unavailable"),
        (_duplicate, None),
    ],
)
def test_sqlite_errors_from_the_real_driver(
    setup: Callable[[Path], None], kind: str | None, tmp_path: Path
) -> None:
    err = _sqlite_error(setup, tmp_path / "x.db")
    assert kind_of(err) == kind, (err, getattr(err, "sqlite_errorname", None))
