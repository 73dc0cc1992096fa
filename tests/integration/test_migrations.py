"""Alembic builds (and unbuilds) the schema on both back-ends."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect
from sqlmodel import SQLModel

import app.models_registry  # noqa: F401  (every table on SQLModel.metadata)
from alembic import command
from app.core.db.database import Database, sync_url
from app.core.db.migrate import alembic_config, upgrade
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


def test_0008_moves_the_checks_out_of_input(database_url: str) -> None:
    """An operation created when `validation` was read from `input` keeps its checks."""
    cfg = alembic_config(database_url)
    command.downgrade(cfg, "0007")
    now = datetime.now(UTC)
    checks = {"json_schema": {"type": "object"}, "max_bytes": 1000}
    common = dict(
        principal="p", fingerprint="f", provider="mock", kind="report", trace_id="tr",
        state="observing", version=0, create_deadline_at=now, result_deadline_at=now,
        poll_attempt=0, lease_token=0, created_at=now, updated_at=now,
    )  # fmt: skip
    engine = create_engine(sync_url(database_url))
    try:
        with engine.begin() as conn:
            table = sa.Table("operations", sa.MetaData(), autoload_with=conn)
            conn.execute(
                table.insert(),
                [
                    {**common, "id": "op_checked", "idempotency_key": "k1",
                     "provider_token": "t1", "input": {"validation": checks}},
                    {**common, "id": "op_plain", "idempotency_key": "k2",
                     "provider_token": "t2", "input": {"scenario": {"name": "fast"}}},
                ],
            )  # fmt: skip
        upgrade(database_url)
        with engine.connect() as conn:
            table = sa.Table("operations", sa.MetaData(), autoload_with=conn)
            rows = dict(conn.execute(sa.select(table.c.id, table.c.validation)).all())
    finally:
        engine.dispose()
    assert rows == {"op_checked": checks, "op_plain": None}


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
