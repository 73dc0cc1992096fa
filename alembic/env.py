"""Alembic environment: migrates the database named by JOBGATE_DATABASE_URL (sync driver)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, event
from sqlmodel import SQLModel

import app.models_registry  # noqa: F401  (registers every table on SQLModel.metadata)
from app.core.config import Settings
from app.core.db.database import is_sqlite, sync_url
from app.core.db.drivers.sqlite_conn import pragmas as sqlite_pragmas

config = context.config
url = config.attributes.get("database_url") or Settings().database_url


def run_migrations_online() -> None:
    engine = create_engine(sync_url(url))
    if is_sqlite(url):
        event.listen(engine, "connect", lambda conn, _rec: sqlite_pragmas(conn))
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=SQLModel.metadata,
            render_as_batch=is_sqlite(url),
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run_migrations_online()
