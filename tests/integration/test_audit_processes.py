"""Several processes, one chain: two gateways (each with its observer) and a standalone
observer append to the audit trail of one PostgreSQL database at the same time."""

from __future__ import annotations

import concurrent.futures
import uuid
from collections import Counter
from pathlib import Path

import httpx2
import pytest
from sqlalchemy import create_engine, text

from app.core.db.database import sync_url
from tests.integration.test_audit_trail import jobgate
from tests.support.processes import Process, gateway_env, gateway_process

N = 40  # operations, created half through each gateway
DEADLINES = {"create_seconds": 300, "result_seconds": 600}


def _run_one(url: str) -> str:
    body = {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": {"name": "slow", "polls": 2}},
        "deadlines": DEADLINES,
    }
    r = httpx2.post(
        f"{url}/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=30
    )
    assert r.status_code == 202, r.text
    op = r.json()
    while not op["done"]:
        op = httpx2.get(
            f"{url}/v1/operations/{op['operation_id']}/wait", params={"timeout": 20}, timeout=30
        ).json()
    assert op["outcome"] == "succeeded", op
    return str(op["operation_id"])


@pytest.mark.postgres_only
def test_processes_appending_at_once_leave_one_valid_chain(
    database_url: str,
    mock_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    env = gateway_env(database_url, mock_url, tmp_path / "data")
    observer = Process(["observe"], {**env, "JOBGATE_OBSERVER_ID": "obs"}, tmp_path / "o.log")
    with (
        gateway_process({**env, "JOBGATE_OBSERVER_ID": "gw-a"}, tmp_path / "a.log") as (_, a),
        gateway_process({**env, "JOBGATE_OBSERVER_ID": "gw-b"}, tmp_path / "b.log") as (_, b),
    ):
        observer.start()
        try:
            with concurrent.futures.ThreadPoolExecutor(16) as pool:
                ids = list(pool.map(_run_one, [a, b] * (N // 2)))
        finally:
            observer.kill()
    assert len(set(ids)) == N

    assert jobgate(monkeypatch, database_url, "audit", "verify") == 0
    out = capsys.readouterr().out
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            history = conn.execute(text("SELECT count(*) FROM operation_history")).scalar_one()
            entries = conn.execute(text("SELECT seq, actor FROM audit_log ORDER BY seq")).all()
    finally:
        engine.dispose()
    # Every history row has its entry, numbered without a gap, in one verified chain.
    assert len(entries) == history
    assert f"audit chain intact: {history} entries" in out
    assert [seq for seq, _ in entries] == list(range(1, history + 1))
    # All three processes wrote into it, interleaved.
    writers = Counter(actor.split(":", 1)[1] for _, actor in entries if ":" in actor)
    assert {"gw-a", "gw-b"} <= set(writers), writers
    gateways = [a for _, a in entries if a in ("observer:gw-a", "observer:gw-b")]
    switches = sum(1 for x, y in zip(gateways, gateways[1:], strict=False) if x != y)
    assert switches > 2, switches  # not one process's entries in a block, then the other's
