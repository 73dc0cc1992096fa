"""Alembic builds (and unbuilds) the schema on both back-ends."""

from __future__ import annotations

import asyncio

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect
from sqlmodel import SQLModel

import app.models_registry  # noqa: F401  (every table on SQLModel.metadata)
from alembic import command
from app.core.db import Database, sync_url
from app.core.migrate import alembic_config, upgrade
from app.operations import repository as repo


def _tables(url: str) -> set[str]:
    engine = create_engine(sync_url(url))
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_downgrade_upgrade(database_url: str) -> None:
    assert {"operations", "operation_history", "result_items"} <= _tables(database_url)
    command.downgrade(alembic_config(database_url), "base")
    assert not ({"operations", "operation_history"} & _tables(database_url))
    upgrade(database_url)
    assert {"operations", "operation_history", "result_items"} <= _tables(database_url)


def test_models_match_the_migrations(database_url: str) -> None:
    """Alembic's autogenerate finds nothing to do: tables, columns, types and indexes agree.

    Runs on whichever back-end the suite runs on, so both are compared.
    """
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True})
            drift = compare_metadata(ctx, SQLModel.metadata)
    finally:
        engine.dispose()
    assert drift == [], drift


@pytest.mark.postgres_only
def test_claims_on_postgres_use_skip_locked(database_url: str) -> None:
    """Two claimers racing on one database never get the same row."""
    from tests.integration.claim_fixtures import seed_due

    async def run() -> tuple[list[str], list[str]]:
        db = Database(database_url)
        try:
            now = await seed_due(db, 40)

            async def claim(owner: str) -> list[str]:
                async with db.transaction() as s:
                    ops = await repo.claim_due(
                        s, now=now, owner=owner, lease_seconds=30, limit=25, skip_locked=True
                    )
                return [o.id for o in ops]

            a, b = await asyncio.gather(claim("a"), claim("b"))
            return a, b
        finally:
            await db.dispose()

    a, b = asyncio.run(run())
    assert not set(a) & set(b)
    assert len(a) + len(b) == 40
