"""PostgreSQL connections closed by the server while idle in the pool never reach a request.

The pool pings a connection before use only once it has been idle
`JOBGATE_DB_PING_AFTER_IDLE_SECONDS` (app/core/db/drivers/conn_pool.py), instead of on every
checkout. The server closes every connection of the gateway's database here (as a
restart or an idle timeout would); the next request must still be answered.
"""

from __future__ import annotations

import httpx2
import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.conftest import Gateway

pytestmark = pytest.mark.postgres_only


def close_server_side(database_url: str) -> int:
    """Terminate every other session on the gateway's database; how many there were."""
    u = make_url(database_url)
    with psycopg.connect(
        host=u.host, port=u.port, user=u.username, dbname=u.database, autocommit=True
    ) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


async def list_status(gateway: Gateway) -> int:
    return (await gateway.http.get("/v1/operations")).status_code


@pytest.mark.parametrize("gateway_settings", [{"db_ping_after_idle_seconds": 0}])
async def test_a_pooled_connection_closed_by_the_server_is_replaced_before_use(
    gateway: Gateway,
) -> None:
    assert await list_status(gateway) == 200  # a connection is now in the pool
    assert close_server_side(gateway.ctx.db.url) >= 1
    assert await list_status(gateway) == 200
    created = await gateway.start()
    assert created.status_code in (201, 202), created.text


@pytest.mark.parametrize("gateway_settings", [{"db_ping_after_idle_seconds": 3600}])
async def test_a_connection_used_within_the_idle_limit_is_not_pinged(gateway: Gateway) -> None:
    """What the ping saves, and why the test above can fail: unpinged, the closed
    connection reaches one request (a 503 database_unavailable: the connection is gone,
    nothing was written), and the pool is replaced after it."""
    assert await list_status(gateway) == 200
    assert close_server_side(gateway.ctx.db.url) >= 1
    transport = httpx2.ASGITransport(app=gateway.app, raise_app_exceptions=False)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        failed = await http.get("/v1/operations")
    assert failed.status_code == 503
    assert failed.json()["error"]["code"] == "database_unavailable", failed.text
    assert await list_status(gateway) == 200
