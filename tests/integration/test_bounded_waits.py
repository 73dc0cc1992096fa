"""No request waits without bound behind another process's lock (docs/operations.md,
"Bounded waits"). A session of the test's own holds the operation's row lock, as an
observer frozen inside its transaction would; the agent's cancel answers `503
database_busy` with Retry-After once `JOBGATE_DB_LOCK_TIMEOUT_SECONDS` has passed,
records nothing, and goes through once the lock is gone."""

from __future__ import annotations

import time

import psycopg
import pytest
from sqlalchemy.engine import make_url

from app.core.config import Settings
from tests.conftest import Gateway
from tests.support.timing import QUICK_S, budget

pytestmark = pytest.mark.postgres_only


@pytest.fixture
def gateway_settings() -> dict[str, float]:
    return {"db_lock_timeout_seconds": 1.0}


def test_the_session_settings_are_milliseconds() -> None:
    settings = Settings(
        db_lock_timeout_seconds=1.5,
        db_statement_timeout_seconds=0,
        db_idle_in_transaction_timeout_seconds=60,
    )
    assert settings.db_session_settings() == {
        "lock_timeout": "1500",
        "statement_timeout": "0",
        "idle_in_transaction_session_timeout": "60000",
    }


async def test_a_cancel_behind_a_held_row_lock_answers_503_within_the_bound(
    gateway: Gateway,
) -> None:
    made = (await gateway.start({"name": "never_finishes"})).json()
    op_id = made["operation_id"]
    u = make_url(gateway.ctx.db.url)
    with psycopg.connect(host=u.host, port=u.port, user=u.username, dbname=u.database) as held:
        held.execute("SELECT 1 FROM operations WHERE id = %s FOR UPDATE", (op_id,))
        started = time.monotonic()
        r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
        waited = time.monotonic() - started
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "database_busy"
        assert r.headers["Retry-After"] == "30"
        assert 1.0 <= waited < 1.0 + budget(QUICK_S)
        held.rollback()
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["status"] != "cancelling"  # the refused cancel recorded nothing
    again = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
    assert again.status_code == 202, again.text
