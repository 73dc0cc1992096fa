"""The database holds "one operation per remote job" itself (migration 0019): whatever
checks run before, a second row naming the same job at the same provider is refused,
so two decisions racing to bind one job cannot both land (the resolve's own check is
in tests/integration/profiles/test_anthropic_accept_identity.py)."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError

from app.core.db.database import sync_url
from tests.conftest import Gateway


async def test_a_second_operation_cannot_name_a_bound_job(
    gateway: Gateway, database_url: str
) -> None:
    first = (await gateway.start({"name": "fast"})).json()["operation_id"]
    job = (await gateway.run_until_done(first))["remote_job_id"]
    second = (await gateway.start({"name": "fast"}, key="another")).json()["operation_id"]
    await gateway.run_until_done(second)
    engine = create_engine(sync_url(database_url))
    try:
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(
                text("UPDATE operations SET remote_job_id = :job WHERE id = :id"),
                {"job": job, "id": second},
            )
        with engine.begin() as conn:  # other providers, and rows without a job, are free
            conn.execute(
                text(
                    "UPDATE operations SET provider = 'other', remote_job_id = :job WHERE id = :id"
                ),
                {"job": job, "id": second},
            )
            conn.execute(text("UPDATE operations SET remote_job_id = NULL"))
    finally:
        engine.dispose()
