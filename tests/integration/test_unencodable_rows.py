"""Rows that already hold unencodable text (written by older versions) break no list.

Found by fuzzing: one create with a lone surrogate in a label made every list that included
the row answer 500, for everyone, for good. The intake now refuses such text; rows
written before that are shown with U+FFFD in place of what cannot be encoded.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlalchemy import text

from app.auth import service as keys
from tests.conftest import Gateway

BAD_LABEL = '{"team": "\\udfff", "ok": "yes"}'  # JSON text as an older version stored it
BAD_ERROR = '{"code": "contract_violation", "message": "job \\ud800 and another"}'
REPLACED = "\ufffd"


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"auth": "keys"}


async def _key(gw: Gateway, role: str) -> dict[str, str]:
    _, key = await keys.create(gw.ctx.db, f"{role}-{uuid.uuid4().hex[:6]}", role, gw.clock.now())
    return {"Authorization": f"Bearer {key}"}


async def _tamper(gw: Gateway, op_id: str, column: str, raw_json: str) -> None:
    """Write JSON text straight into a column, bypassing every check (as old rows were)."""
    value = "CAST(:v AS json)" if not gw.ctx.db.is_sqlite else ":v"
    async with gw.ctx.db.transaction() as session:
        await session.execute(
            text(f"UPDATE operations SET {column} = {value} WHERE id = :id"),
            {"v": raw_json, "id": op_id},
        )


async def _start(gw: Gateway, agent: dict[str, str], scenario: dict[str, Any]) -> str:
    r = await gw.http.post(
        "/v1/operations",
        json={"provider": "mock", "kind": "report", "input": {"scenario": scenario}},
        headers={**agent, "Idempotency-Key": uuid.uuid4().hex},
    )
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


async def test_lists_survive_rows_with_lone_surrogates(gateway: Gateway) -> None:
    agent, operator = await _key(gateway, "agent"), await _key(gateway, "operator")
    running = await _start(gateway, agent, {"name": "never_finishes"})
    broken = await _start(gateway, agent, {"name": "different_job_id", "list_delay": 1})
    for _ in range(20):  # run_until_done reads without a key; tick until it stops
        await gateway.tick(5)
    await _tamper(gateway, running, "labels", BAD_LABEL)
    await _tamper(gateway, broken, "labels", BAD_LABEL)
    await _tamper(gateway, broken, "error", BAD_ERROR)

    for who in (agent, operator):
        for path in (
            "/v1/operations",
            "/v1/operations?provider=mock",
            "/v1/operations?status=needs_attention",
            "/v1/attention",
        ):
            r = await gateway.http.get(path, headers=who)
            assert r.status_code == 200, (path, r.text)
        items = (await gateway.http.get("/v1/operations", headers=who)).json()["items"]
        labels = {i["operation_id"]: i["labels"] for i in items}
        assert labels[running] == {"team": REPLACED, "ok": "yes"}  # only the bad text changes
        one = (await gateway.http.get(f"/v1/operations/{broken}", headers=who)).json()
        assert one["error"]["message"] == f"job {REPLACED} and another"
        attention = (await gateway.http.get("/v1/attention", headers=who)).json()["items"]
        assert [i["operation"]["operation_id"] for i in attention] == [broken]

    for page in ("/operations", "/operations?label=ok%3Dyes", "/operations/attention"):
        r = await gateway.http.get(page, headers=operator)
        assert r.status_code == 200, (page, r.text)
        assert running in r.text or page.endswith("attention")
    r = await gateway.http.get(f"/operations/{broken}", headers=operator)
    assert r.status_code == 200 and REPLACED in r.text


async def test_lists_survive_a_row_with_bytes_that_are_not_utf8(gateway: Gateway) -> None:
    """SQLite stores any bytes as TEXT when written outside the API (PostgreSQL refuses
    them at the door, so there is nothing to read back there)."""
    if not gateway.ctx.db.is_sqlite:
        pytest.skip("PostgreSQL refuses invalid UTF-8 on write")
    agent = await _key(gateway, "agent")
    op_id = await _start(gateway, agent, {"name": "never_finishes"})
    async with gateway.ctx.db.transaction() as session:
        await session.execute(
            text("UPDATE operations SET kind = CAST(X'7265ff706f7274' AS TEXT) WHERE id = :id"),
            {"id": op_id},
        )
    for path in ("/v1/operations", f"/v1/operations/{op_id}", "/v1/operations?in_flight=true"):
        r = await gateway.http.get(path, headers=agent)
        assert r.status_code == 200, (path, r.text)
    body = (await gateway.http.get(f"/v1/operations/{op_id}", headers=agent)).json()
    assert body["kind"] == f"re{REPLACED}port"
