"""A transition outside the table is refused, recorded, and changes nothing."""

from __future__ import annotations

from app.operations import repository as repo
from app.operations.domain.states import Evidence, State
from app.operations.driver.decision import Decision
from app.operations.driver.write import apply
from app.operations.repository import Fence
from tests.conftest import Gateway


async def test_progress_100_cannot_become_succeeded(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    await gateway.tick(61)  # observing
    engine = gateway.ctx
    gateway.clock.advance(61)
    async with engine.db.transaction() as session:
        [op] = await repo.claim_due(
            session,
            now=engine.now(),
            owner=engine.worker_id,
            lease_seconds=30,
            limit=1,
            skip_locked=False,
        )
    bogus = Decision(
        State.SUCCEEDED,
        "progress says 100%",
        Evidence("remote_success"),
        {"progress_completed": 100, "progress_total": 100},
    )
    assert not await apply(engine, op, Fence(engine.worker_id, op.lease_token), bogus)
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["state"] == "observing" and body["done"] is False
    items = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    refused = [i for i in items if i["kind"] == "refused"]
    assert refused and refused[-1]["to_state"] == "succeeded"
    assert "not in the transition table" in refused[-1]["cause"]
