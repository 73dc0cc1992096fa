"""What one job costs the database, counted through the real HTTP path and the mock:
every history row of a step goes in one statement, and the job's statement count stays
within a budget (the figures of bench/statements_per_job.py, with room)."""

from __future__ import annotations

import collections
from typing import Any

from app.core.db import txn
from tests.conftest import Gateway

POLLS = 3


async def test_a_steps_history_rows_go_in_one_statement(gateway: Gateway) -> None:
    per_txn: collections.Counter[int] = collections.Counter()  # transaction -> history INSERTs
    most = 0
    statements = 0

    class Probe(txn.Probe):
        def statement(self, t: Any, sql: str, _args: Any, _seconds: float) -> None:
            nonlocal statements
            statements += 1
            if sql.lstrip().upper().startswith("INSERT INTO OPERATION_HISTORY"):
                per_txn[id(t)] += 1

        def commit(self, t: Any) -> None:
            nonlocal most
            most = max(most, per_txn.pop(id(t), 0))

        def rollback(self, t: Any) -> None:
            per_txn.pop(id(t), None)

    probe = Probe()
    txn.PROBES.append(probe)
    try:
        r = await gateway.start({"name": "slow", "polls": POLLS})
        op_id = r.json()["operation_id"]
        await gateway.run_until_done(op_id, step=61)
    finally:
        txn.PROBES.remove(probe)
    rows = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    kinds = collections.Counter(r["kind"] for r in rows)
    # The first status read is written (its state is news); the polls after it change only
    # progress (written at most every 5 s) and are counted in one row before the end.
    assert kinds["exchange"] >= 3 and kinds["observation"] >= 2
    assert most == 1, f"a transaction sent {most} history INSERTs"
    # The whole job driven by the observer's production loop (`run(until_idle=True)` per
    # tick: its claims, the claim that finds nothing, the next-due read and the hand-back
    # of a held poll), the agent's reads included: 84 on SQLite and 76 on PostgreSQL when
    # written (PostgreSQL reads send no BEGIN). The job has 3 polls: a new statement in
    # every step breaks this budget (tests/integration/test_durable_minimum.py counts the
    # same job under the observer that runs for good).
    assert statements <= 86, statements
