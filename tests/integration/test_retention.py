"""Retention: a prune removes finished operations and everything hanging off them, keeps
what is not done or needs a person, and leaves tombstones that keep the keys: a replay of
a pruned key answers `410 operation_pruned` and starts nothing at the provider."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from app.core.db.row_table import table_of
from app.operations.domain.models import HistoryEntry
from app.retention.prune import Plan, prune_all
from tests.conftest import Gateway
from tests.support.cli_run import jobgate_cli

DAY = 86400.0
HIST = table_of(HistoryEntry)


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    # Every result is a stored file, so the prune's file removal is exercised.
    return {"inline_result_max_bytes": 16}


def _jobs(gw: Gateway) -> int:
    return len(gw.mock.get("/_mock/stats").json()["jobs"])


async def _history_rows(gw: Gateway, op_id: str) -> int:
    async with gw.ctx.db.read() as txn:
        stmt = select(func.count()).select_from(HIST).where(HIST.c.operation_id == op_id)
        return int((await txn.execute(stmt)).scalar_one())


async def _done(gw: Gateway, scenario: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    r = await gw.start(scenario, key=key)
    assert r.status_code == 202, r.text
    return dict(await gw.run_until_done(r.json()["operation_id"]))


def _plan(gw: Gateway, *, days_later: float, keep_days: float = 30) -> Plan:
    return Plan(now=gw.clock.now() + timedelta(days=days_later), retention_seconds=keep_days * DAY)


async def test_prune_removes_finished_operations_and_keeps_what_must_stay(
    gateway: Gateway,
) -> None:
    done = await _done(gateway, {"name": "fast"})
    ref = (await gateway.http.get(f"/v1/operations/{done['operation_id']}/result")).status_code
    assert ref == 200
    async with gateway.ctx.db.read() as txn:
        from app.operations import repository as repo

        row = await repo.get(txn, done["operation_id"])
    assert row is not None and row.result_ref is not None
    stored = gateway.ctx.results.path_for(row.result_ref.removeprefix("sha256:"))
    assert stored.exists()
    partial = await _done(gateway, {"name": "partial_results", "processed": 10, "failed": 2})
    broken = await _done(gateway, {"name": "corrupt_result"})
    running = (await gateway.start({"name": "never_finishes"})).json()
    await gateway.tick(5)
    assert partial["outcome"] == "completed_with_errors"
    assert broken["status"] == "needs_attention"
    assert not running["done"]

    # Younger than the retention period: nothing goes.
    young = await prune_all(gateway.ctx.db, gateway.ctx.results, _plan(gateway, days_later=29))
    assert young.operations == 0

    tally = await prune_all(gateway.ctx.db, gateway.ctx.results, _plan(gateway, days_later=31))
    assert tally.operations == 1 and tally.files == 1 and tally.history > 0
    assert not stored.exists()
    assert await _history_rows(gateway, done["operation_id"]) == 0
    gone = await gateway.http.get(f"/v1/operations/{done['operation_id']}")
    assert gone.status_code == 410
    err = gone.json()["error"]
    assert err["code"] == "operation_pruned"
    assert "has FINISHED and SUCCEEDED on 2026-01-01" in err["message"]
    assert err["details"]["outcome"] == "succeeded"
    for kept in (partial, broken, running):  # unacknowledged partial, needs a person, running
        r = await gateway.http.get(f"/v1/operations/{kept['operation_id']}")
        assert r.status_code == 200, r.text
        assert await _history_rows(gateway, kept["operation_id"]) > 0


async def test_a_replay_of_a_pruned_key_answers_410_and_starts_nothing(gateway: Gateway) -> None:
    key = uuid.uuid4().hex
    done = await _done(gateway, {"name": "fast"}, key=key)
    await prune_all(gateway.ctx.db, gateway.ctx.results, _plan(gateway, days_later=31))
    jobs = _jobs(gateway)
    for scenario in ({"name": "fast"}, {"name": "fast", "polls": 2}):
        r = await gateway.start(scenario, key=key)
        assert r.status_code == 410, r.text
        err = r.json()["error"]
        assert err["code"] == "operation_pruned"
        message = err["message"]
        assert f"operation {done['operation_id']} has FINISHED and SUCCEEDED on" in message
        assert "removed after the retention period" in message
        assert "Nothing was started" in message
        assert err["details"]["operation_id"] == done["operation_id"]
        assert err["details"]["same_request"] is (scenario == {"name": "fast"})
    assert _jobs(gateway) == jobs  # no new remote job
    listed = (await gateway.http.get("/v1/operations", params={"limit": 200})).json()["items"]
    assert done["operation_id"] not in {o["operation_id"] for o in listed}
    assert all(o["operation_id"] != done["operation_id"] for o in listed)


@pytest.mark.parametrize(
    "gateway_settings", [{"retention_seconds": 3600, "prune_interval_seconds": 0}]
)
async def test_the_observer_prunes_in_its_periodic_work(gateway: Gateway) -> None:
    done = await _done(gateway, {"name": "fast"})
    await gateway.tick(60)  # younger than an hour: kept
    assert (await gateway.http.get(f"/v1/operations/{done['operation_id']}")).status_code == 200
    await gateway.tick(2 * 3600)
    r = await gateway.http.get(f"/v1/operations/{done['operation_id']}")
    assert r.status_code == 410, r.text


async def test_the_prune_command_counts_then_prunes(
    gateway: Gateway, database_url: str, tmp_path: Path
) -> None:
    """The fake clock stands at 2026-01-01: older than 30 days by the real one."""
    done = await _done(gateway, {"name": "fast"})
    env = {"JOBGATE_DATABASE_URL": database_url, "JOBGATE_DATA_DIR": str(tmp_path / "data")}
    bad = jobgate_cli("prune", "--older-than", "soon", **env)
    assert bad.returncode == 2 and "not a duration" in bad.stderr
    dry = jobgate_cli("prune", "--older-than", "30d", "--dry-run", **env)
    assert dry.returncode == 0, dry.stderr
    assert "would prune 1 finished operations" in dry.stdout
    assert (await gateway.http.get(f"/v1/operations/{done['operation_id']}")).status_code == 200
    real = jobgate_cli("prune", "--older-than", "30d", **env)
    assert real.returncode == 0, real.stderr
    assert "pruned 1 finished operations older than 30d" in real.stdout
    assert (await gateway.http.get(f"/v1/operations/{done['operation_id']}")).status_code == 410


def test_durations_and_the_bar() -> None:
    from app.retention.commands import bar
    from app.retention.durations import parse_duration

    assert parse_duration("30d") == 30 * DAY
    assert parse_duration("12h") == 12 * 3600
    assert parse_duration("0s") == 0
    with pytest.raises(ValueError):
        parse_duration("3 days")
    assert bar(5, 10, width=10) == "[#####.....] 5/10"
