"""A deadline that passed while no process ran still gets one read before it is a state.

The fake clock jumps past the deadline with no observer tick in between (the gateway
was down); the next tick must read the provider once and believe what it says.
"""

from __future__ import annotations

from typing import Any

from tests.conftest import Gateway

DEADLINES = {"create_seconds": 30, "result_seconds": 60, "cancel_seconds": 60}
OUTAGE_SECONDS = 600


async def _state(gw: Gateway, op_id: str) -> str:
    return str((await gw.http.get(f"/v1/operations/{op_id}")).json()["state"])


async def _status_reads_after(gw: Gateway, op_id: str, at: str) -> list[dict[str, Any]]:
    items = (await gw.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    return [
        i
        for i in items
        if i["kind"] == "exchange" and i["data"]["operation"] == "status" and i["at"] >= at
    ]


async def _outage(gw: Gateway) -> str:
    """No process runs while the clock passes every deadline; returns when it came back."""
    back = gw.clock.advance(OUTAGE_SECONDS)
    return back.isoformat().replace("+00:00", "Z")


async def test_a_job_that_finished_during_the_outage_is_collected(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "slow", "polls": 1}, deadlines=DEADLINES)).json()[
        "operation_id"
    ]
    await gateway.tick(5)  # observing; one status read says running
    assert await _state(gateway, op_id) == "observing"
    back = await _outage(gateway)
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "succeeded", final  # not result_timed_out: it was read first
    assert len(await _status_reads_after(gateway, op_id, back)) == 1


async def test_a_job_still_running_after_the_outage_times_out_after_one_read(
    gateway: Gateway,
) -> None:
    op_id = (await gateway.start({"name": "never_finishes"}, deadlines=DEADLINES)).json()[
        "operation_id"
    ]
    await gateway.tick(5)
    back = await _outage(gateway)
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "result_timed_out"
    reads = await _status_reads_after(gateway, op_id, back)
    assert len(reads) == 1 and reads[0]["data"]["status_code"] == 200


async def test_a_result_that_became_available_during_the_outage_is_fetched(
    gateway: Gateway,
) -> None:
    scenario = {"name": "result_unavailable", "polls": 1}
    op_id = (await gateway.start(scenario, deadlines=DEADLINES)).json()["operation_id"]
    await gateway.tick(5)  # status says succeeded; the first result call answers 503
    assert await _state(gateway, op_id) == "result_collecting"
    await _outage(gateway)
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "succeeded"  # not result_unavailable


async def _cancel_sent_then_outage(gw: Gateway, scenario: dict[str, Any]) -> tuple[str, str]:
    """An operation whose cancel was sent, then an outage past its cancel deadline."""
    op_id = (await gw.start(scenario, deadlines=DEADLINES)).json()["operation_id"]
    await gw.tick(5)
    r = await gw.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop"})
    assert r.status_code == 202
    await gw.tick(0)  # the owner sends the cancel
    assert await _state(gw, op_id) == "cancelling"
    return op_id, await _outage(gw)


async def test_a_cancel_confirmed_during_the_outage_is_cancelled(gateway: Gateway) -> None:
    op_id, _ = await _cancel_sent_then_outage(gateway, {"name": "never_finishes"})
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "cancelled"  # not cancellation_unconfirmed


async def test_a_cancel_never_confirmed_is_unconfirmed_after_one_read(gateway: Gateway) -> None:
    op_id, back = await _cancel_sent_then_outage(gateway, {"name": "cancel_ignored"})
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "cancellation_unconfirmed"
    assert len(await _status_reads_after(gateway, op_id, back)) == 1
