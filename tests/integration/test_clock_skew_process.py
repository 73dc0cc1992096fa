"""A real observer process whose host clock runs an hour ahead, or an hour behind
(libfaketime), beside a normal gateway on PostgreSQL (docs/operations.md, "Clocks").

Phase one: only the skewed processes run, a `jobgate observe` and a gateway without an
observer, both an hour off; operations are created through the skewed gateway. The
gateway is not ready and says why, `/metrics` flags the skew, the observer claims
nothing, and nothing it computed fires early (deadlines and leases are on the
database's clock). Phase two: a normal gateway joins, and every operation ends
succeeded with exactly one provider job; none becomes `create_unconfirmed`.

PostgreSQL only: on SQLite the reference is the boot's clock anchor, and phase one's
skewed processes would be the first of the boot to measure, so the anchor would take
their time (the case `jobgate clock --adopt-host` is for, docs/operations.md "Clocks");
test_clock_skew.py covers SQLite with a normal gateway measuring first.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.support.faketime import child_clock_offset, skewed_env
from tests.support.processes import Process, gateway_env, gateway_process, post_operation
from tests.support.timing import PROCESS_START_S, PROCESS_WORK_S, budget

pytestmark = pytest.mark.postgres_only

RESULT_SECONDS = 120  # real seconds: an hour-ahead clock taken at its word would be past it
OPS = 4


def _sql(database_url: str, query: str, *args: Any) -> list[tuple[Any, ...]]:
    u = make_url(database_url)
    with psycopg.connect(host=u.host, port=u.port, user=u.username, dbname=u.database) as c:
        return list(c.execute(query, args).fetchall())  # type: ignore[arg-type]


def _create(url: str, key: str) -> str:
    body = {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": {"name": "slow", "polls": 2}},
        "deadlines": {"result_seconds": RESULT_SECONDS},
    }
    r = post_operation(url, key, body)
    assert r is not None and r.status_code in (200, 201, 202), r
    return str(r.json()["operation_id"])


def _wait_log(proc: Process, text: str) -> None:
    ends = time.monotonic() + budget(PROCESS_START_S)
    while text not in proc.log.read_text() and time.monotonic() < ends:
        assert proc.alive(), proc.log.read_text()[-3000:]
        time.sleep(0.05)
    assert text in proc.log.read_text(), proc.log.read_text()[-3000:]


def _wait_all_due_for(database_url: str, ops: list[str], *, seconds: float) -> None:
    """Short polls until each operation's next poll (and lease) is `seconds` in the past
    on the database's clock."""
    ends = time.monotonic() + budget(PROCESS_WORK_S)
    query = (
        "SELECT count(*) FROM operations WHERE id = ANY(%s) AND (next_poll_at IS NULL OR "
        "GREATEST(next_poll_at, COALESCE(lease_expires_at, next_poll_at)) "
        "> (now() AT TIME ZONE 'UTC') - make_interval(secs => %s))"
    )
    while _sql(database_url, query, ops, seconds) != [(0,)]:
        assert _skewed_steps(database_url) == 0, "the skewed observer claimed work"
        assert time.monotonic() < ends, _sql(database_url, "SELECT * FROM operations")
        time.sleep(0.05)


def _skewed_steps(database_url: str) -> int:
    """History rows the skewed observer wrote: each step it took writes at least one."""
    rows = _sql(
        database_url,
        "SELECT count(*) FROM operation_history WHERE actor = %s",
        "observer:skewed-observer",
    )
    return int(rows[0][0])


@pytest.mark.parametrize(("shift", "sign"), [("+1h", 1), ("-1h", -1)])
def test_an_observer_an_hour_off_claims_nothing_and_nothing_fires_early(
    shift: str,
    sign: int,
    database_url: str,
    mock_url: str,
    mock_client: httpx2.Client,
    tmp_path: Path,
) -> None:
    off = skewed_env(shift)
    # libfaketime really moves the wall clock, by an hour in the direction asked
    assert 3590 < sign * child_clock_offset(off) < 3610

    skewed = {**gateway_env(database_url, mock_url, tmp_path / "skewed"), **off}
    observer = Process(
        ["observe"],
        {**skewed, "JOBGATE_OBSERVER_ID": "skewed-observer"},
        tmp_path / "skewed-observer.log",
    ).start()
    try:
        _wait_log(observer, "clock skew")
        gw_env = {**skewed, "JOBGATE_OBSERVER_ID": "skewed-gateway"}
        with gateway_process(gw_env, tmp_path / "skewed-gw.log", observer=False) as (_, url):
            ready = httpx2.get(f"{url}/v1/readyz", timeout=10)
            assert ready.status_code == 503, ready.text
            assert "clock skew" in ready.json()["reason"], ready.text
            # the database's clock minus this host's: the other way round
            assert -3610 < sign * ready.json()["clock_offset_seconds"] < -3590
            metrics = httpx2.get(f"{url}/metrics", timeout=10).text
            assert "jobgate_clock_skewed 1.0" in metrics

            before = datetime.now(UTC)
            ops = [_create(url, f"skewed-{i}") for i in range(OPS)]
            # Until every operation has been due (its next poll and any intake lease
            # behind it) for 20 observer intervals: a claiming observer takes it by then.
            _wait_all_due_for(database_url, ops, seconds=20 * 0.05)
            assert _skewed_steps(database_url) == 0
            rows = _sql(
                database_url,
                "SELECT id, state, result_deadline_at FROM operations WHERE id = ANY(%s)",
                ops,
            )
            assert len(rows) == OPS
            for op_id, state, deadline in rows:
                assert state not in ("result_timed_out", "create_unconfirmed"), (op_id, state)
                due_in = (deadline.replace(tzinfo=UTC) - before).total_seconds()
                assert abs(due_in - RESULT_SECONDS) < budget(10), (op_id, due_in)

        normal = gateway_env(database_url, mock_url, tmp_path / "normal", observer_id="normal")
        with gateway_process(normal, tmp_path / "normal.log") as (_, normal_url):
            assert httpx2.get(f"{normal_url}/v1/readyz", timeout=10).status_code == 200
            ops += [_create(normal_url, f"normal-{i}") for i in range(OPS)]
            ends = time.monotonic() + budget(PROCESS_WORK_S)
            bodies: list[dict[str, Any]] = []
            while time.monotonic() < ends:
                bodies = [
                    httpx2.get(f"{normal_url}/v1/operations/{o}", timeout=10).json() for o in ops
                ]
                if all(b["done"] for b in bodies):
                    break
                time.sleep(0.1)
            assert [b["outcome"] for b in bodies] == ["succeeded"] * len(ops), bodies
        assert observer.alive()
    finally:
        observer.terminate()

    for op_id in ops:
        jobs = mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()
        assert len(jobs["jobs_by_reference"].get(op_id, [])) == 1, op_id
    assert _skewed_steps(database_url) == 0
