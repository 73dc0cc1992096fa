"""How a failed write is told apart: storage full, database gone, or the gateway's own bug."""

from __future__ import annotations

import errno
import sqlite3

import asyncpg
import pytest
from sqlalchemy.exc import OperationalError

from app.core.db.write_faults import StorageFull, kind_of


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
