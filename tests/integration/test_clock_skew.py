"""One clock for every process: the database's (docs/operations.md, "Clocks").

Two gateways share one database in this process: one whose host clock runs an hour
ahead (an injected host clock, app/core/db/db_clock.py corrects it) and a normal one. The
skewed one is not ready, says why, and its observer claims nothing; what its intake
writes (deadlines, the intake lease) is on the database's clock, so nothing it wrote
fires early; the normal observer finishes every operation with one provider job each.
On SQLite the reference is the boot's clock anchor (app/core/db/host_anchor.py), taken
by the normal gateway, which measures first: the same assertions hold."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.main import create_app
from app.operations import repository as repo
from tests.conftest import make_settings
from tests.support.shifted_clock import ShiftedClock
from tests.support.timing import PROCESS_WORK_S, budget

HOUR = 3600.0
RESULT_SECONDS = 600.0


@asynccontextmanager
async def gateway(settings: Any, host_clock: Any = None) -> AsyncIterator[tuple[Any, Any]]:
    """A gateway in this process on the real (or a shifted) host clock; the test runs
    its observer."""
    app = create_app(settings, host_clock=host_clock, run_observer=False)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield app, http


async def _create(http: httpx2.AsyncClient, key: str) -> str:
    r = await http.post(
        "/v1/operations",
        json={
            "provider": "mock",
            "kind": "report",
            "input": {"scenario": {"name": "slow", "polls": 2}},
            "deadlines": {"result_seconds": RESULT_SECONDS},
        },
        headers={"Idempotency-Key": key},
    )
    assert r.status_code in (200, 201, 202), r.text
    return str(r.json()["operation_id"])


async def test_an_hour_ahead_host_is_corrected_refused_and_never_fires_early(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    common = {"time_scale": 0.01, "lease_seconds": 2.0, "observer_interval_seconds": 0.05}
    normal_settings = make_settings(
        database_url, mock_url, tmp_path / "a", observer_id="normal", **common
    )
    skewed_settings = make_settings(
        database_url, mock_url, tmp_path / "b", observer_id="skewed", **common
    )
    async with (
        gateway(normal_settings) as (normal, normal_http),
        gateway(skewed_settings, ShiftedClock(HOUR)) as (skewed, skewed_http),
    ):
        health = skewed.state.ctx.clock_health
        ready = await skewed_http.get("/v1/readyz")
        assert health.offset_seconds == pytest.approx(-HOUR, abs=2.0)
        assert ready.status_code == 503, ready.text
        assert "clock skew" in ready.json()["reason"]
        assert re.search(r"clock is \+3(599|600)\.\d+ s off", ready.json()["reason"])
        metrics = (await skewed_http.get("/metrics")).text
        assert "jobgate_clock_skewed 1.0" in metrics
        assert (await normal_http.get("/v1/readyz")).status_code == 200

        # Created through both gateways: the skewed one's intake writes database time.
        before = datetime.now(UTC)
        ops = [await _create(skewed_http, f"skewed-{i}") for i in range(3)]
        ops += [await _create(normal_http, f"normal-{i}") for i in range(3)]
        await skewed.state.ctx.background.drain()
        await normal.state.ctx.background.drain()
        async with normal.state.ctx.db.read() as txn:
            rows = [await repo.get(txn, op_id) for op_id in ops]
        for row in rows:
            assert row is not None
            ahead = (row.result_deadline_at - before).total_seconds()
            assert RESULT_SECONDS - 1 <= ahead <= RESULT_SECONDS + budget(5.0), row.id
            assert row.lease_expires_at is None or (
                (row.lease_expires_at - before).total_seconds() < HOUR / 2
            )

        # The skewed observer claims nothing, however much is due.
        assert await skewed.state.observer.run(until_idle=True) == 0

        ends = time.monotonic() + budget(PROCESS_WORK_S)
        bodies: list[dict[str, Any]] = []
        while time.monotonic() < ends:
            await normal.state.observer.run(until_idle=True)
            assert await skewed.state.observer.run(until_idle=True) == 0
            bodies = [(await normal_http.get(f"/v1/operations/{o}")).json() for o in ops]
            if all(b["done"] for b in bodies):
                break
            await asyncio.sleep(0.05)
        assert [b["outcome"] for b in bodies] == ["succeeded"] * len(ops), bodies
        for op_id in ops:
            jobs = mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()
            assert len(jobs["jobs_by_reference"].get(op_id, [])) == 1, op_id
