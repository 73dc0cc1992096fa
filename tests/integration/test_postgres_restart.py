"""PostgreSQL stopped and started again under load, on a cluster the test runs itself
(tests/support/pg_cluster.py; docs/operations.md, "When storage or the database fails").

A gateway with its observer works through operations while the server is stopped
(`pg_ctl stop -m fast`, which ends every session) and started again. Creates asked
during the outage answer `503 database_unavailable` and nothing else; the agent's
retries with the same key go through afterwards; every operation ends succeeded with
exactly one provider job, none in a needs-attention state.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.core.db.migrate import upgrade
from tests.support import pg_cluster
from tests.support.processes import gateway_env, gateway_process, post_operation
from tests.support.timing import PROCESS_WORK_S, budget

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not pg_cluster.available(), reason="needs PostgreSQL 15's binaries, root"),
]

BEFORE, DURING = 12, 4


def _body(i: int) -> dict[str, Any]:
    return {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": {"name": "slow", "polls": 3}},
        "labels": {"n": str(i)},
    }


def test_a_restarted_postgres_loses_nothing_and_duplicates_nothing(
    mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    with pg_cluster.own_cluster() as cluster:
        url = cluster.createdb("jobgate")
        upgrade(url)
        env = gateway_env(url, mock_url, tmp_path / "data")
        with gateway_process(env, tmp_path / "gw.log") as (proc, gw):
            ops: dict[str, str] = {}
            for i in range(BEFORE):
                r = post_operation(gw, f"k{i}", _body(i))
                assert r is not None and r.status_code == 202, r and r.text
                ops[f"k{i}"] = r.json()["operation_id"]
            cluster.stop()
            codes = []
            for i in range(BEFORE, BEFORE + DURING):
                r = post_operation(gw, f"k{i}", _body(i))
                assert r is not None
                codes.append((r.status_code, r.json()["error"]["code"]))
            assert codes == [(503, "database_unavailable")] * DURING, codes
            cluster.start()
            ends = time.monotonic() + budget(PROCESS_WORK_S)
            for i in range(BEFORE, BEFORE + DURING):  # the agent's retries, same key
                while True:
                    r = post_operation(gw, f"k{i}", _body(i))
                    assert r is not None
                    if r.status_code == 202:
                        ops[f"k{i}"] = r.json()["operation_id"]
                        break
                    assert r.status_code == 503 and time.monotonic() < ends, r.text
                    time.sleep(0.1)
            bodies: list[dict[str, Any]] = []
            while time.monotonic() < ends:
                bodies = [
                    httpx2.get(f"{gw}/v1/operations/{o}", timeout=10).json() for o in ops.values()
                ]
                if all(b["done"] for b in bodies):
                    break
                time.sleep(0.1)
            assert [b["state"] for b in bodies] == ["succeeded"] * len(ops), bodies
            assert proc.alive()
        for op_id in ops.values():
            jobs = mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()
            assert len(jobs["jobs_by_reference"].get(op_id, [])) == 1, op_id
