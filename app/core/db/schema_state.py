"""Is the database reachable and at the head migration? One answer for readiness and start-up.

`serve` and `observe` refuse to start on a database that is not at the head (one line
saying to run `jobgate migrate`), and `/v1/readyz` answers 503 with the same reason, so a
gateway never looks healthy while every write would fail on a missing table.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import SQLAlchemyError

from app.core.db.database import Database, is_sqlite, sync_url
from app.core.db.migrate import alembic_config
from app.core.runtime.refusal import StartRefused

FIX = "run `jobgate migrate` (with the same JOBGATE_DATABASE_URL) first"


class SchemaNotReady(StartRefused):
    """Start-up refused: the database is unreachable or not at the head migration."""


@dataclass(frozen=True)
class SchemaState:
    """What readiness reports: whether the schema is usable, and if not, why."""

    ready: bool
    reason: str  # "ok" or one sentence
    current: str | None
    head: str

    def as_json(self) -> dict[str, object]:
        return {
            "ready": self.ready,
            "reason": self.reason,
            "database_revision": self.current,
            "head_revision": self.head,
        }


@functools.cache
def _script() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config("sqlite://"))


@functools.cache
def head_revision() -> str:
    """The newest migration this code ships (one head: the history is linear)."""
    return ",".join(sorted(_script().get_heads()))


def judge(current: str | None, *, has_tables: bool) -> SchemaState:
    """The verdict on a revision read from `alembic_version` (None: no such table/row)."""
    head = head_revision()
    if current == head:
        return SchemaState(True, "ok", current, head)
    if current is None:
        what = "has jobgate tables but no migration record" if has_tables else "was never migrated"
        return SchemaState(False, f"the database {what}; {FIX}", None, head)
    if current not in {r.revision for r in _script().walk_revisions()}:
        return SchemaState(
            False,
            f"the database is at migration {current}, which this jobgate does not know "
            f"(newer code migrated it?); its head is {head}",
            current,
            head,
        )
    return SchemaState(
        False, f"the database is at migration {current}, behind {head}; {FIX}", current, head
    )


_VERSION_SQL = "SELECT version_num FROM alembic_version"


def _read(conn: Connection) -> SchemaState:
    from sqlalchemy import inspect

    tables = set(inspect(conn).get_table_names())
    if "alembic_version" not in tables:
        return judge(None, has_tables="operations" in tables)
    row = conn.execute(text(_VERSION_SQL)).first()
    return judge(row[0] if row else None, has_tables=True)


def check_sync(database_url: str) -> SchemaState:
    """Start-up check on a short-lived sync connection; never creates a SQLite file."""
    if is_sqlite(database_url):
        path = make_url(sync_url(database_url)).database
        if path and path != ":memory:" and not Path(path).exists():
            return judge(None, has_tables=False)
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            return _read(conn)
    except SQLAlchemyError as exc:
        return _unreachable(exc)
    finally:
        engine.dispose()


def require_ready(database_url: str, *, may_migrate: bool) -> None:
    """Before `serve`/`observe` start: migrate the SQLite default, refuse anything not at head."""
    if may_migrate:
        from app.core.db.migrate import upgrade

        upgrade(database_url)
        return
    state = check_sync(database_url)
    if not state.ready:
        raise SchemaNotReady(state.reason)


# The tables of the schema a connection reads by default, as the start-up check's
# inspector lists them.
_TABLES = {
    "sqlite": "SELECT name FROM sqlite_master WHERE type = 'table'",
    "postgresql": "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()",
}


async def check(db: Database) -> SchemaState:
    """The readiness check on the running pool (two short reads, no new connection)."""
    try:
        async with db.read() as txn:
            rows = await txn.execute(text(_TABLES[txn.dialect.name]))
            tables = {name for (name,) in rows}
            if "alembic_version" not in tables:
                return judge(None, has_tables="operations" in tables)
            row = (await txn.execute(text(_VERSION_SQL))).first()
            return judge(row[0] if row else None, has_tables=True)
    except Exception as exc:  # unreachable however the driver says it: not ready
        return _unreachable(exc)


def _unreachable(exc: Exception) -> SchemaState:
    first = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    detail = first[0][:200] if first else type(exc).__name__
    return SchemaState(False, f"the database is not reachable: {detail}", None, head_revision())
