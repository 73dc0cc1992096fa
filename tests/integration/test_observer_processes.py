"""Observers as real processes: crash holding a lease, SIGTERM, and two sharing PostgreSQL."""

from __future__ import annotations

import collections
import concurrent.futures
import os
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import create_engine, text

from app.core.db.database import sync_url
from tests.support.processes import Process, gateway_env, gateway_process
from tests.support.timing import PROCESS_WORK_S, budget

DEADLINES = {"create_seconds": 300, "result_seconds": 600}
POOL = httpx2.Limits(max_connections=16, max_keepalive_connections=16)  # reads reuse connections


def _start(url: str, scenario: dict[str, Any]) -> str:
    body = {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": scenario},
        "deadlines": DEADLINES,
    }
    r = httpx2.post(
        f"{url}/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=30
    )
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


def _observer(env: dict[str, str], name: str, log: Path, **extra: str) -> Process:
    env = {**env, "JOBGATE_OBSERVER_ID": name}
    env.update({f"JOBGATE_{k.upper()}": v for k, v in extra.items()})
    return Process(["observe"], env, log).start()


def _listeners(database_url: str) -> int:
    """Sessions LISTENing on the database (the gateway's, and each observer's)."""
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            sql = "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'"
            return int(conn.execute(text(sql)).scalar_one())
    finally:
        engine.dispose()


def _until(pred: Any, timeout: float, what: str) -> None:
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_observer_killed_holding_a_lease_is_replaced(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    env = gateway_env(database_url, mock_url, tmp_path / "data")
    with gateway_process(env, tmp_path / "gw.log", observer=False) as (_, url):
        op_id = _start(url, {"name": "slow", "polls": 2})
        assert httpx2.get(f"{url}/v1/operations/{op_id}").json()["state"] == "accepted"
        doomed = _observer(env, "doomed", tmp_path / "a.log", crash_at="after_observing")
        assert doomed.wait_exit() == -9  # SIGKILL right after taking over, before polling
        op = httpx2.get(f"{url}/v1/operations/{op_id}").json()
        assert op["state"] == "observing" and op["done"] is False
        heir = _observer(env, "heir", tmp_path / "b.log")
        try:
            final = httpx2.get(
                f"{url}/v1/operations/{op_id}/wait", params={"timeout": 20}, timeout=30
            ).json()
        finally:
            heir.kill()
        assert final["outcome"] == "succeeded", final
        hist = httpx2.get(f"{url}/v1/operations/{op_id}/history").json()["items"]
    actors = [h["actor"] for h in hist if h["kind"] in ("transition", "observation")]
    assert "observer:doomed" in actors and "observer:heir" in actors
    token = next(h["data"]["provider_token"] for h in hist if h["to_state"] == "create_pending")
    assert (
        len(mock_client.get("/_mock/stats", params={"token": token}).json()["jobs_by_token"][token])
        == 1
    )


def test_sigterm_releases_leases_and_exits_cleanly(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    env = gateway_env(database_url, mock_url, tmp_path / "data", lease_seconds=30)
    with gateway_process(env, tmp_path / "gw.log", observer=False) as (_, url):
        ids = [_start(url, {"name": "never_finishes"}) for _ in range(10)]
        obs = _observer(env, "graceful", tmp_path / "o.log")

        def polled() -> bool:
            items = httpx2.get(f"{url}/v1/operations", params={"state": "observing"}).json()
            return len(items["items"]) == len(ids)

        _until(polled, budget(PROCESS_WORK_S), "all operations observing")
        assert obs.terminate() == 0
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            held = conn.execute(
                text("SELECT count(*) FROM operations WHERE lease_owner = 'graceful'")
            ).scalar_one()
            due = conn.execute(
                text("SELECT count(*) FROM operations WHERE next_poll_at IS NOT NULL")
            ).scalar_one()
    finally:
        engine.dispose()
    assert held == 0 and due == len(ids)  # nothing lost, nothing left locked


@pytest.mark.postgres_only
@pytest.mark.timeout(budget(300))  # above the waits below, so a slow run fails on what it saw
def test_two_observers_never_poll_one_job_under_the_same_lease(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    # 200 is enough for both observers to take work (asserted below); 500 took 104 s.
    n = int(os.environ.get("TWO_OBS_N", "200"))
    env = gateway_env(database_url, mock_url, tmp_path / "data", lease_seconds=5)
    with (
        gateway_process(env, tmp_path / "gw.log", observer=False) as (_, url),
        httpx2.Client(base_url=url, timeout=30, limits=POOL) as gw,
        concurrent.futures.ThreadPoolExecutor(16) as pool,
    ):
        ids = list(pool.map(lambda _: _start(url, {"name": "slow", "polls": 2}), range(n)))
        observers = [_observer(env, f"obs{i}", tmp_path / f"o{i}.log") for i in range(2)]
        try:

            def all_done() -> bool:
                r = gw.get("/v1/operations", params={"in_flight": "true", "limit": 1})
                return r.json()["items"] == []

            _until(all_done, budget(150), "all operations done")
        finally:
            for o in observers:
                o.kill()
        done = gw.get("/v1/operations", params={"status": "succeeded", "limit": 200})
        assert done.status_code == 200
        bodies = list(pool.map(lambda i: gw.get(f"/v1/operations/{i}").json(), ids))
        calls = list(
            pool.map(
                lambda b: mock_client.get("/_mock/calls", params={"job_id": b["remote_job_id"]}),
                bodies,
            )
        )
    assert {b["status"] for b in bodies} == {"succeeded"}
    workers_per_lease: dict[tuple[str, str], set[str]] = collections.defaultdict(set)
    by_worker: collections.Counter[str] = collections.Counter()
    for b, answer in zip(bodies, calls, strict=True):
        for call in answer.json():
            if call["op"] == "status" and call["worker"]:
                worker, lease = call["worker"].split("#")
                workers_per_lease[(b["remote_job_id"], lease)].add(worker)
                by_worker[worker] += 1
    assert all(len(w) == 1 for w in workers_per_lease.values())
    assert set(by_worker) == {"obs0", "obs1"}  # both did real work


@pytest.mark.postgres_only
def test_an_observer_claims_what_another_process_released_when_it_falls_due(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    """A gateway without an observer hands each new operation back to the queue, due in
    a moment (20 ms here); a standalone observer whose claim interval is 60 s still
    polls it then: the release's NOTIFY says when it falls due. Without it, the first
    poll waited for the observer's next interval."""
    env = gateway_env(database_url, mock_url, tmp_path / "data", lease_seconds=5)
    with gateway_process(env, tmp_path / "gw.log", observer=False) as (_, url):
        obs = _observer(env, "slow-claimer", tmp_path / "o.log", observer_interval_seconds="60")
        try:
            _until(lambda: _listeners(database_url) >= 2, budget(20), "the observer to listen")
            time.sleep(0.5)  # its first claim (nothing due) is made: it sleeps its interval
            ops = [_start(url, {"name": "fast"}) for _ in range(3)]

            def all_done() -> bool:
                return all(httpx2.get(f"{url}/v1/operations/{o}").json()["done"] for o in ops)

            _until(all_done, budget(10), "the observer to take the released operations")
        finally:
            obs.kill()
