"""The durable minimum per job, counted under the observer that production runs (a gateway
with its in-process observer on the real clock, time scaled, against the real mock): the
intent, the job id, the first observation and the end, each one write transaction with
its history and audit rows; the polls in between that bring nothing new write nothing
(docs/architecture.md, "What a step writes")."""

from __future__ import annotations

import collections
import uuid
from pathlib import Path
from typing import Any

import httpx2

from app.core.db import txn
from app.main import create_app
from tests.conftest import make_settings

JOBS = 5
BODY = {"provider": "mock", "kind": "report", "input": {"scenario": {"name": "slow", "polls": 3}}}


class Counting(txn.Probe):
    def __init__(self) -> None:
        self.writes = 0
        self.reads = 0
        self.statements: collections.Counter[str] = collections.Counter()

    def statement(self, _t: Any, sql: str, _args: Any, _seconds: float) -> None:
        self.statements[" ".join(sql.split()[:3]).upper()] += 1

    def commit(self, t: Any) -> None:
        if t.wrote:
            self.writes += 1
        else:
            self.reads += 1


async def test_a_job_costs_its_durable_minimum(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    settings = make_settings(database_url, mock_url, tmp_path, time_scale=0.005)
    app = create_app(settings)
    probe = Counting()
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            txn.PROBES.append(probe)
            try:
                for _ in range(JOBS):
                    headers = {"Idempotency-Key": uuid.uuid4().hex}
                    op = (await c.post("/v1/operations", json=BODY, headers=headers)).json()
                    while not op["done"]:
                        wait = f"/v1/operations/{op['operation_id']}/wait"
                        op = (await c.get(wait, params={"timeout": 30})).json()
                    assert op["outcome"] == "succeeded", op
            finally:
                txn.PROBES.remove(probe)
            history = (await c.get(f"/v1/operations/{op['operation_id']}/history")).json()
    per_job = {k: v / JOBS for k, v in probe.statements.items()}
    # intent; accepted; accepted -> observing with the first status read; the end. The
    # loop's own claims and next-due reads add a little when a poll falls to the queue.
    assert probe.writes / JOBS <= 4.5, (probe.writes, per_job)
    assert per_job.get("INSERT INTO OPERATION_HISTORY", 0) <= 4.5, per_job
    assert per_job.get("INSERT INTO AUDIT_LOG", 0) <= 4.5, per_job
    # The agent's one read: the wait's first (the key's replay check rides on the intent's
    # transaction, and the end reaches the wait from the commit in this process); beside
    # it, now and then the loops' own: the observer's next-due read, and the claims of the
    # observer and the callbacks that found nothing (no write: counted as reads here).
    assert probe.reads / JOBS <= 2.5, (probe.reads, per_job)
    kinds = collections.Counter(row["kind"] for row in history["items"])
    # Three running polls and the finishing one: two status exchanges written (the first,
    # which is news, and the finishing one) beside the create's and the result's; the
    # others are counted in one observation row.
    assert kinds["exchange"] == 4, kinds
    counted = [r for r in history["items"] if (r.get("data") or {}).get("unchanged_polls")]
    assert len(counted) <= 1, history
