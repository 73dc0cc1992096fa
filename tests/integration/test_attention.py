"""The attention inbox and operators' recorded decisions."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import select

from app.operations.repository.tables import OPS
from tests.conftest import Gateway
from tests.support.timing import budget


async def _resolve(gw: Gateway, op_id: str, **body: Any) -> Any:
    return await gw.http.post(f"/v1/operations/{op_id}/resolve", json=body)


async def test_inbox_lists_needs_attention_oldest_first_with_why(gateway: Gateway) -> None:
    a = (await gateway.start({"name": "corrupt_result"})).json()["operation_id"]
    await gateway.run_until_done(a)
    b = (await gateway.start({"name": "different_job_id", "list_delay": 1})).json()["operation_id"]
    await gateway.run_until_done(b)
    c = (await gateway.start({"name": "partial_results", "processed": 10, "failed": 2})).json()[
        "operation_id"
    ]
    await gateway.run_until_done(c)
    ok = (await gateway.start({"name": "sync"})).json()["operation_id"]
    items = (await gateway.http.get("/v1/attention")).json()["items"]
    ids = [i["operation"]["operation_id"] for i in items]
    assert ids == [a, b, c] and ok not in ids
    whys = [i["why"] for i in items]
    assert "checks" in whys[0] and "contract" in whys[1] and "2 items failed" in whys[2]


async def test_pick_the_true_job_after_a_contract_violation(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "different_job_id", "list_delay": 1})).json()[
        "operation_id"
    ]
    final = await gateway.run_until_done(op_id)
    true_job = final["error"]["details"]["job_ids"][0]
    r = await _resolve(
        gateway, op_id, decision="accept_job", reason="verified in console", remote_job_id=true_job
    )
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "accepted" and r.json()["remote_job_id"] == true_job
    done = await gateway.run_until_done(op_id)
    assert done["status"] == "succeeded"
    hist = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    states = [i["to_state"] for i in hist if i["kind"] == "transition"]
    assert "contract_violation" in states  # nothing before the decision was erased
    decision = next(
        i for i in hist if i["kind"] == "transition" and i["actor"].startswith("operator:")
    )
    assert "verified in console" in decision["cause"]


async def test_resume_after_result_deadline_needs_a_new_deadline(gateway: Gateway) -> None:
    op_id = (
        await gateway.start({"name": "slow", "polls": 30}, deadlines={"result_seconds": 120})
    ).json()["operation_id"]
    final = await gateway.run_until_done(op_id, step=61)
    assert final["state"] == "result_timed_out"
    r = await _resolve(gateway, op_id, decision="resume_observing", reason="keep waiting")
    assert r.status_code == 409 and r.json()["error"]["code"] == "result_deadline_required"
    r = await _resolve(
        gateway,
        op_id,
        decision="resume_observing",
        reason="keep waiting",
        result_deadline_seconds=7200,
    )
    assert r.status_code == 200 and r.json()["state"] == "observing"
    assert (await gateway.run_until_done(op_id, step=61))["status"] == "succeeded"


async def test_abandon_records_who_and_why(gateway: Gateway) -> None:
    op_id = (
        await gateway.start({"name": "create_timeout"}, deadlines={"create_seconds": 30})
    ).json()["operation_id"]
    await gateway.run_until_done(op_id, step=10)
    r = await _resolve(gateway, op_id, decision="abandon", reason="provider confirmed no job")
    body = r.json()
    assert body["state"] == "abandoned" and body["status"] == "failed" and body["done"]
    assert "dev" in body["error"]["message"] and "provider confirmed" in body["error"]["message"]


async def test_acknowledging_partial_results_clears_the_inbox(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "partial_results", "processed": 10, "failed": 1})).json()[
        "operation_id"
    ]
    await gateway.run_until_done(op_id)
    r = await _resolve(gateway, op_id, decision="acknowledge", reason="failures reviewed")
    assert r.status_code == 200 and r.json()["state"] == "succeeded"
    assert (await gateway.http.get("/v1/attention")).json()["items"] == []


async def test_resolve_refuses_operations_that_do_not_need_attention(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    r = await _resolve(gateway, op_id, decision="abandon", reason="x")
    assert r.status_code == 409 and r.json()["error"]["code"] == "not_needing_attention"
    r = await _resolve(gateway, op_id, decision="explode", reason="x")
    assert r.status_code == 422


async def test_a_second_concurrent_acknowledge_cannot_overwrite_the_first(gateway: Gateway) -> None:
    """Two operators acknowledge at once: one decision is recorded, the other gets 409.

    The test holds the operation's row (PostgreSQL) or the write lock (SQLite) while
    both requests read it and queue their writes; reads take no write lock, so both
    requests see the same version before either writes.
    """
    op_id = (await gateway.start({"name": "partial_results", "processed": 10, "failed": 1})).json()[
        "operation_id"
    ]
    await gateway.run_until_done(op_id)
    async with gateway.ctx.db.transaction() as session:
        await session.execute(select(OPS.c.id).where(OPS.c.id == op_id).with_for_update())
        both = [
            asyncio.ensure_future(_resolve(gateway, op_id, decision="acknowledge", reason=who))
            for who in ("reviewed by A", "reviewed by B")
        ]
        # Let both requests read and reach their write; they cannot finish while we hold it.
        await asyncio.wait(both, timeout=budget(1.0))
        assert not any(t.done() for t in both)
    first, second = await asyncio.gather(*both)
    assert sorted([first.status_code, second.status_code]) == [200, 409], (first, second)
    refused = first if first.status_code == 409 else second
    assert refused.json()["error"]["code"] == "operation_changed"
    history = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    decisions = [h for h in history if h["kind"] == "decision"]
    assert len(decisions) == 1, decisions  # exactly one decision, never overwritten
