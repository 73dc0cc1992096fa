"""The database itself refuses UPDATE and DELETE on history, on both back-ends."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from app.core.db.database import sync_url
from tests.conftest import Gateway


async def test_history_rows_cannot_be_changed_or_deleted(gateway: Gateway) -> None:
    r = await gateway.start({"name": "fast"})
    op_id = r.json()["operation_id"]
    engine = create_engine(sync_url(gateway.ctx.settings.database_url))
    try:
        for sql in (
            "UPDATE operation_history SET cause = 'rewritten' WHERE operation_id = :id",
            "DELETE FROM operation_history WHERE operation_id = :id",
        ):
            with pytest.raises(DBAPIError, match="append-only"), engine.begin() as conn:
                conn.execute(text(sql), {"id": op_id})
        with engine.connect() as conn:
            n = conn.execute(
                text("SELECT count(*) FROM operation_history WHERE operation_id = :id"),
                {"id": op_id},
            ).scalar_one()
            assert n >= 2
            causes = conn.execute(text("SELECT cause FROM operation_history")).scalars().all()
            assert "rewritten" not in causes
    finally:
        engine.dispose()


async def test_history_goes_only_with_its_operation_and_a_tombstone(gateway: Gateway) -> None:
    """The prune's order (docs/operations.md, "Retention"): the operation row gone is not
    enough; with its tombstone written, its history may go."""
    r = await gateway.start({"name": "fast"})
    op_id = r.json()["operation_id"]
    engine = create_engine(sync_url(gateway.ctx.settings.database_url))
    drop_history = text("DELETE FROM operation_history WHERE operation_id = :id")
    tombstone = text(
        "INSERT INTO operation_tombstones (operation_id, principal, idempotency_key,"
        " fingerprint, provider, kind, state, outcome, finished_at, pruned_at) VALUES"
        " (:id, 'p', :id, 'f', 'mock', 'report', 'succeeded', 'succeeded',"
        " CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
    )
    try:
        with pytest.raises(DBAPIError, match="append-only"), engine.begin() as conn:
            conn.execute(text("DELETE FROM operations WHERE id = :id"), {"id": op_id})
            conn.execute(drop_history, {"id": op_id})  # no tombstone
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM operations WHERE id = :id"), {"id": op_id})
            conn.execute(tombstone, {"id": op_id})
            assert conn.execute(drop_history, {"id": op_id}).rowcount >= 2
    finally:
        engine.dispose()
