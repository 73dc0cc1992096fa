"""Watching remote jobs until they really end, driven by a fake clock and the mock."""

from __future__ import annotations

from datetime import timedelta

from app.operations import repository as repo
from tests.conftest import Gateway


async def test_slow_job_polls_a_bounded_number_of_times(gateway: Gateway) -> None:
    r = await gateway.start({"name": "slow", "polls": 4})
    op_id = r.json()["operation_id"]
    seen = []
    for _ in range(60):
        body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
        seen.append(body["status"])
        if body["done"]:
            break
        await gateway.tick(61)  # past any backoff (cap 60 s): one poll per tick
    assert body["status"] == "succeeded" and body["result"] is not None
    assert seen.count("processing") >= 4
    token = await gateway.token_of(op_id)
    job = gateway.stats(token)["jobs_by_token"][token][0]
    # 4 running answers + the one that said succeeded; nothing more.
    assert gateway.stats(token)["jobs"][job]["status_calls"] == 5


async def test_late_failure_is_failed_never_success(gateway: Gateway) -> None:
    r = await gateway.start({"name": "late_failure", "polls": 3})
    final = await gateway.run_until_done(r.json()["operation_id"], step=61)
    assert final["status"] == "failed" and final["state"] == "failed"
    assert final["error"]["code"] == "render_failed"
    assert final["result"] is None


async def test_never_finishes_times_out_into_needs_attention(gateway: Gateway) -> None:
    r = await gateway.start({"name": "never_finishes"}, deadlines={"result_seconds": 600})
    op_id = r.json()["operation_id"]
    w = await gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 0})
    body = w.json()
    assert body["outcome"] == "timed_out" and body["done"] is False
    assert body["operation_id"] == op_id
    assert "goes on in the background" in body["message"] and "IN PROGRESS" in body["message"]
    final = await gateway.run_until_done(op_id, step=61)
    assert final["state"] == "result_timed_out" and final["status"] == "needs_attention"
    token = await gateway.token_of(op_id)
    job = gateway.stats(token)["jobs_by_token"][token][0]
    calls = gateway.stats(token)["jobs"][job]["status_calls"]
    await gateway.tick(3600)  # automatic polling stopped
    assert gateway.stats(token)["jobs"][job]["status_calls"] == calls


async def test_retry_after_schedules_the_next_poll_no_earlier(gateway: Gateway) -> None:
    r = await gateway.start({"name": "rate_limited", "retry_after": 7, "times": 1})
    op_id = r.json()["operation_id"]
    await gateway.tick(61)  # accepted -> observing, first poll answers 429
    async with gateway.ctx.db.transaction() as session:
        op = await repo.get(session, op_id)
    assert op is not None and op.state == "observing"
    assert op.next_poll_at is not None
    assert op.next_poll_at - gateway.clock.now() >= timedelta(seconds=7)
    await gateway.tick(6)  # not yet due: no call
    token = await gateway.token_of(op_id)
    job = gateway.stats(token)["jobs_by_token"][token][0]
    assert gateway.stats(token)["jobs"][job]["status_calls"] == 1
    final = await gateway.run_until_done(op_id, step=2)
    assert final["status"] == "succeeded"


async def test_partial_results_report_counts_and_page_errors(gateway: Gateway) -> None:
    r = await gateway.start({"name": "partial_results", "processed": 20000, "failed": 140})
    final = await gateway.run_until_done(r.json()["operation_id"], step=61)
    assert final["status"] == "completed_with_errors"
    assert final["result_summary"] == {
        "processed": 20000,
        "succeeded": 19860,
        "failed": 140,
        "not_processed": 0,
    }
    assert "a PARTIAL result: 140 items of 20000 FAILED" in final["message"]
    errors_call = f"GET /v1/operations/{final['operation_id']}/errors?limit=50"
    assert final["next_action"]["call"] == errors_call
    seen, cursor, pages = 0, None, 0
    while True:
        params = {"limit": 50} | ({"cursor": cursor} if cursor else {})
        page = (await gateway.http.get(final["errors_url"].split("?")[0], params=params)).json()
        assert len(page["items"]) <= 50
        seen += len(page["items"])
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == 140 and pages == 3


async def test_corrupt_result_fails_validation(gateway: Gateway) -> None:
    r = await gateway.start({"name": "corrupt_result"})
    final = await gateway.run_until_done(r.json()["operation_id"])
    assert final["state"] == "result_validation_failed"
    assert final["error"]["details"]["check"] == "checksum_mismatch"
    res = await gateway.http.get(f"/v1/operations/{final['operation_id']}/result")
    assert res.status_code == 409 and res.json()["error"]["code"] == "result_not_available"


async def test_result_temporarily_unavailable_is_retried(gateway: Gateway) -> None:
    r = await gateway.start({"name": "result_unavailable", "polls": 2})
    final = await gateway.run_until_done(r.json()["operation_id"], step=61)
    assert final["status"] == "succeeded"


async def test_result_down_past_the_deadline_is_result_unavailable(gateway: Gateway) -> None:
    r = await gateway.start(
        {"name": "result_unavailable", "polls": 10_000}, deadlines={"result_seconds": 300}
    )
    final = await gateway.run_until_done(r.json()["operation_id"], step=61)
    assert final["state"] == "result_unavailable" and final["status"] == "needs_attention"


async def test_a_429_storm_is_waited_out_not_hammered(gateway: Gateway) -> None:
    gateway.ctx.rng.seed(1)  # backoff jitter is deterministic in this test
    r = await gateway.start({"name": "rate_limited", "retry_after": 7, "times": 5})
    op_id = r.json()["operation_id"]
    token = await gateway.token_of(op_id)
    await gateway.tick(61)  # accepted -> observing, first poll answers 429
    job = gateway.stats(token)["jobs_by_token"][token][0]
    seen = 0
    for _ in range(60):
        calls = gateway.stats(token)["jobs"][job]["status_calls"]
        if calls > seen and calls <= 5:  # a new 429: the next poll waits out Retry-After
            seen = calls
            async with gateway.ctx.db.transaction() as session:
                op = await repo.get(session, op_id)
            assert op is not None and op.next_poll_at is not None
            assert op.next_poll_at - gateway.clock.now() >= timedelta(seconds=7), calls
        if calls > 5:
            break
        await gateway.tick(1)
    final = await gateway.run_until_done(op_id, step=7)
    assert final["status"] == "succeeded"
    assert gateway.stats(token)["jobs"][job]["status_calls"] == 6


async def test_every_observation_is_a_history_row_with_both_clocks(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "slow", "polls": 2})).json()["operation_id"]
    await gateway.run_until_done(op_id, step=61)
    items = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    running = [i["data"] for i in items if i["kind"] == "observation"]
    assert len(running) == 2
    for obs in running:
        assert obs["remote_state"] == "running" and obs["progress"]["total"]
        assert obs["provider_time"] and obs["received_at"]
        assert obs["next_poll_in_seconds"] > 0
