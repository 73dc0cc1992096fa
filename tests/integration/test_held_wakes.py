"""A poll held between quiet reads is never stuck on what it did not re-read: a cancel
recorded by another process reaches the observer holding it (on PostgreSQL by the
notification the cancel intent rides on; anywhere, at the latest when the lease is
renewed, which returns the row's version and cancel intent). Real processes: a gateway
that runs no observer takes the agent's calls; an observer process holds the poll."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import IS_POSTGRES
from tests.support.processes import Process, gateway_env, gateway_process
from tests.support.timing import PROCESS_START_S, budget

BODY = {
    "provider": "mock",
    "kind": "report",
    "input": {"scenario": {"name": "never_finishes"}},
    "deadlines": {"create_seconds": 300, "result_seconds": 600, "cancel_seconds": 300},
}


def _state(url: str, op_id: str) -> dict[str, Any]:
    return dict(httpx2.get(f"{url}/v1/operations/{op_id}", timeout=10).json())


def _until(pred: Any, seconds: float, what: str) -> None:
    ends = time.monotonic() + budget(seconds)
    while not pred():
        assert time.monotonic() < ends, what
        time.sleep(0.05)


def _held_then_cancelled(
    database_url: str, mock_url: str, mock: httpx2.Client, tmp: Path, lease: float
) -> float:
    """Seconds from the agent's cancel to `cancelled`, while the poll was held quiet."""
    # Progress is written at most hourly: every read after the first changes nothing.
    extra = {"lease_seconds": lease, "progress_write_seconds": 3600}
    env = gateway_env(database_url, mock_url, tmp / "data", **extra)
    observer = Process(["observe"], {**env, "JOBGATE_OBSERVER_ID": "holder"}, tmp / "o.log")
    with gateway_process(env, tmp / "gw.log", observer=False) as (_, url):
        observer.start()
        try:
            r = httpx2.post(
                f"{url}/v1/operations",
                json=BODY,
                headers={"Idempotency-Key": uuid.uuid4().hex},
                timeout=30,
            )
            assert r.status_code == 202, r.text
            op_id = r.json()["operation_id"]

            def calls() -> int:
                stats = mock.get("/_mock/stats", params={"client_reference": op_id}).json()
                jobs = list(stats["jobs"].values())
                return int(jobs[0]["status_calls"]) if jobs else 0

            _until(lambda: calls() >= 8, PROCESS_START_S, "the observer never polled")
            rows = httpx2.get(f"{url}/v1/operations/{op_id}/history", timeout=10).json()["items"]
            reads = [h for h in rows if (h.get("data") or {}).get("operation") == "status"]
            assert len(reads) <= 2, rows  # polled many times, written once or twice
            started = time.monotonic()
            cancel = httpx2.post(
                f"{url}/v1/operations/{op_id}/cancel", json={"reason": "stop"}, timeout=10
            )
            assert cancel.status_code == 202, cancel.text
            _until(lambda: _state(url, op_id)["state"] == "cancelled", 30, "never cancelled")
            took = time.monotonic() - started
            stats = mock.get("/_mock/stats", params={"client_reference": op_id}).json()
            [job] = stats["jobs"].values()
            assert job["cancel_calls"] == 1, stats
            return took
        finally:
            observer.kill()


@pytest.mark.postgres_only
def test_a_cancel_from_another_process_wakes_a_held_poll_at_once(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    # A lease of a minute: its renewal (every 30 s) cannot be what noticed the cancel.
    took = _held_then_cancelled(database_url, mock_url, mock_client, tmp_path, lease=60.0)
    assert took < budget(5.0), took


@pytest.mark.skipif(IS_POSTGRES, reason="SQLite: no notification, so the renewal notices")
def test_without_a_notification_the_lease_renewal_notices_the_cancel(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    took = _held_then_cancelled(database_url, mock_url, mock_client, tmp_path, lease=2.0)
    assert took < budget(1.0 + 5.0), took  # half the lease, then the cancel's own steps
