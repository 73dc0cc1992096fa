"""A 503 says only what is known of its call (docs/operations.md, "What a 503 says").

The faults are real: a session of the test's own holds a lock the gateway's statement
needs, and `JOBGATE_DB_LOCK_TIMEOUT_SECONDS` makes PostgreSQL refuse the wait (`503
database_busy`), or the test ends the waiting session (`503 database_unavailable`). Held
on `operations` before a create, the intent is not recorded. Held on the audit head, the
create's transaction meets it just before COMMIT: refused there, it did not commit; its
session ended there, whether the intent was recorded is not known. Held after the intent
committed, while the create is with the provider, the intent is recorded and the create
may have been sent. Each says to replay the same key, and the replay finds one job. A
read says the operation is unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import httpx2
import pytest

from app.core.db.drivers.pg_conn import dsn
from tests.conftest import Gateway
from tests.support.observer_loop import eventually

pytestmark = pytest.mark.postgres_only

LOCK_TIMEOUT_S = 0.5


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"db_lock_timeout_seconds": LOCK_TIMEOUT_S, "create_answer_seconds": 0.5}


@pytest.fixture
async def admin(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(dsn(database_url))
    try:
        yield conn
    finally:
        await conn.close()


async def behind_lock(
    admin: asyncpg.Connection, lock_sql: str, ask: Callable[[], Awaitable[httpx2.Response]]
) -> httpx2.Response:
    """`ask` while this session holds the lock `lock_sql` takes."""
    async with admin.transaction():
        await admin.execute(lock_sql)
        return await ask()


def busy(r: httpx2.Response) -> dict[str, Any]:
    assert r.status_code == 503, r.text
    assert r.headers["Retry-After"] == "30"
    error: dict[str, Any] = r.json()["error"]
    assert error["code"] == "database_busy", error
    return error


def no_false_comfort(message: str) -> None:
    """What must never be said of a create that may have been recorded or sent."""
    assert "recorded nothing" not in message and "nothing was recorded" not in message
    assert "sent nothing" not in message and "no provider was called" not in message


async def test_a_create_refused_before_its_intent_says_nothing_was_recorded_or_sent(
    gateway: Gateway, admin: asyncpg.Connection
) -> None:
    r = await behind_lock(
        admin,
        "LOCK TABLE operations IN ACCESS EXCLUSIVE MODE",
        lambda: gateway.start(key="k-before"),
    )
    error = busy(r)
    assert error["message"].startswith("NOT started"), error
    assert "recorded nothing and sent nothing" in error["message"]
    assert "SAME Idempotency-Key" in error["message"]
    assert error["details"]["intent_recorded"] is False
    again = await gateway.start(key="k-before")
    assert again.status_code == 202, again.text
    assert len(gateway.jobs_for(again.json()["operation_id"])) == 1


async def test_a_create_refused_at_its_commit_says_nothing_was_recorded(
    gateway: Gateway, admin: asyncpg.Connection
) -> None:
    """The database refused the transaction (a lock timeout in the audit append just
    before COMMIT): it did not commit, and the words say so."""
    r = await behind_lock(
        admin,
        "LOCK TABLE audit_head IN ACCESS EXCLUSIVE MODE",  # the COMMIT's audit append
        lambda: gateway.start(key="k-refused"),
    )
    error = busy(r)
    assert error["message"].startswith("NOT started"), error
    assert error["details"]["intent_recorded"] is False
    again = await gateway.start(key="k-refused")
    assert again.status_code == 202, again.text
    assert len(gateway.jobs_for(again.json()["operation_id"])) == 1


@pytest.mark.parametrize("gateway_settings", [{"db_lock_timeout_seconds": 30.0}])
async def test_a_create_cut_off_at_its_commit_says_the_intent_is_not_known(
    gateway: Gateway, admin: asyncpg.Connection
) -> None:
    """The connection is lost at the create's COMMIT (its session ended while it waits
    for the audit head): the server may or may not have committed."""
    async with admin.transaction():
        await admin.execute("LOCK TABLE audit_head IN ACCESS EXCLUSIVE MODE")
        asked = asyncio.ensure_future(gateway.start(key="k-commit"))
        pid = await lock_waiter(admin)
        await admin.execute("SELECT pg_terminate_backend($1)", pid)
    r = await asked
    assert r.status_code == 503, r.text
    error = r.json()["error"]
    assert error["code"] == "database_unavailable", error
    assert error["message"].startswith("NOT confirmed"), error
    assert "whether it was recorded is not known" in error["message"]
    assert "this call sent nothing to the provider" in error["message"]
    assert "recorded nothing" not in error["message"]
    assert error["details"]["intent_recorded"] is None
    again = await gateway.start(key="k-commit")
    assert again.status_code == 202, again.text
    assert len(gateway.jobs_for(again.json()["operation_id"])) == 1


async def lock_waiter(admin: asyncpg.Connection) -> int:
    """The pid of the gateway's session waiting on a lock."""
    for _ in range(1000):
        await admin.execute("SELECT pg_stat_clear_snapshot()")  # a fresh view in this txn
        pid = await admin.fetchval(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
        )
        if pid is not None:
            return int(pid)
        await asyncio.sleep(0.01)
    raise AssertionError("no session of the gateway waited on the lock")


async def test_a_create_recorded_then_cut_off_says_so_and_names_the_operation(
    gateway: Gateway, admin: asyncpg.Connection
) -> None:
    """The intent commits, the create is with a slow provider, and the answer's read
    meets the lock: the agent learns the operation's id and to replay, not to start
    again."""
    slow = {"name": "fast", "create_delay_ms": 2_000}
    async with admin.transaction():
        asked = asyncio.ensure_future(gateway.start(slow, key="k-after"))
        for _ in range(500):  # until the intent is committed
            await admin.execute("SELECT pg_stat_clear_snapshot()")
            if await admin.fetchval(
                "SELECT count(*) FROM operations WHERE idempotency_key = 'k-after'"
            ):
                break
            await asyncio.sleep(0.01)
        await admin.execute("LOCK TABLE operations IN ACCESS EXCLUSIVE MODE")
        r = await asked
    error = busy(r)
    no_false_comfort(error["message"])
    assert error["message"].startswith("RECORDED, answer lost"), error
    op_id = error["details"]["operation_id"]
    assert op_id.startswith("op_") and op_id in error["message"]
    assert error["details"]["intent_recorded"] is True
    assert "may already have been sent" in error["message"]
    assert "Do not use a new key" in error["message"]
    again = await gateway.start(slow, key="k-after")
    assert again.status_code in (200, 202), again.text
    assert again.json()["operation_id"] == op_id
    # The first send is still with the slow provider, in a task of this process that
    # keeps its lease beating: the observer rightly leaves it alone, and only real time
    # brings its answer. Wait for that answer to be written (nudging the fake clock, so
    # an answer whose write met the lock is tried again), then let the loop finish it.

    async def answered() -> bool:
        gateway.clock.advance(0.25)
        body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
        return bool(body["state"] != "create_pending")

    await eventually(answered, "the first send's answer written")
    done = await gateway.run_until_done(op_id)
    assert done["outcome"] == "succeeded", done
    assert len(gateway.jobs_for(op_id)) == 1


async def test_reads_say_the_operation_is_unchanged_and_a_cancel_says_it_is_unknown(
    gateway: Gateway, admin: asyncpg.Connection
) -> None:
    made = await gateway.start({"name": "never_finishes"}, key="k-read")
    op_id = made.json()["operation_id"]
    lock = "LOCK TABLE operations IN ACCESS EXCLUSIVE MODE"
    for path in (f"/v1/operations/{op_id}", f"/v1/operations/{op_id}/wait", "/v1/operations"):
        r = await behind_lock(admin, lock, lambda p=path: gateway.http.get(p))  # type: ignore[misc]
        error = busy(r)
        assert error["message"].startswith("NOT read"), (path, error)
        assert "unchanged by this call" in error["message"]
        assert "Ask again after 30 seconds" in error["message"]
        assert "Idempotency-Key" not in error["message"]
    r = await behind_lock(
        admin,
        lock,
        lambda: gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"}),
    )
    error = busy(r)
    assert error["message"].startswith("NOT confirmed"), error
    assert "whether it took effect is not known" in error["message"]
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["status"] == "processing"
