"""HTTP edges: a chunked body over the limit, and the methods a path allows."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

from sqlalchemy import func, select

from app.operations.domain.models import OperationTable
from tests.conftest import Gateway


async def _operations(gw: Gateway) -> int:
    async with gw.ctx.db.transaction() as session:
        return int(
            (await session.execute(select(func.count()).select_from(OperationTable))).scalar_one()
        )


async def test_chunked_body_over_the_limit_is_413(gateway: Gateway) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"provider":"mock","kind":"report","input":{"blob":"'
        for _ in range(300):
            yield b"x" * 1024
        yield b'"}}'

    r = await gateway.http.post(
        "/v1/operations",
        content=chunks(),
        headers={"Idempotency-Key": uuid.uuid4().hex, "Content-Type": "application/json"},
    )
    assert "content-length" not in r.request.headers  # really chunked
    assert r.status_code == 413, r.text
    assert r.json()["error"]["code"] == "body_too_large"
    assert await _operations(gateway) == 0


async def test_options_and_405_list_every_allowed_method(gateway: Gateway) -> None:
    r = await gateway.http.options("/v1/operations")
    assert r.status_code == 204
    assert {m.strip() for m in r.headers["allow"].split(",")} >= {"GET", "POST"}
    r = await gateway.http.delete("/v1/operations")
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"
    assert {m.strip() for m in r.headers["allow"].split(",")} == {"GET", "POST"}
