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
