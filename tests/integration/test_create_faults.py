"""Ambiguous and broken creates: each ends with one remote job and an honest state."""

from __future__ import annotations

from typing import Any

from tests.conftest import Gateway


async def _history(gw: Gateway, op_id: str) -> list[dict[str, Any]]:
    r = await gw.http.get(f"/v1/operations/{op_id}/history")
    assert r.status_code == 200
    return list(r.json()["items"])


def _path(items: list[dict[str, Any]]) -> list[str]:
    return [i["to_state"] for i in items if i["kind"] == "transition"]


async def test_lost_create_response_reconciles_to_the_one_job(gateway: Gateway) -> None:
    r = await gateway.start({"name": "lost_create_response"})
    body = r.json()
    assert r.status_code == 202
    assert body["state"] == "create_unknown"
    assert body["done"] is False and body["status"] == "processing"
    op_id = body["operation_id"]
    await gateway.tick(10)
    token = await gateway.token_of(op_id)
    stats = gateway.stats(token)
    assert len(stats["jobs_by_token"][token]) == 1
    assert gateway.jobs_for(op_id) == stats["jobs_by_token"][token]  # no job under another token
    job_id = stats["jobs_by_token"][token][0]
    op = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert op["remote_job_id"] == job_id
    path = _path(await _history(gateway, op_id))
    assert path[:4] == ["create_pending", "create_unknown", "reconciling", "accepted"]
    final = await gateway.run_until_done(op_id)
    assert final["status"] == "succeeded"
    assert len(gateway.stats(token)["jobs_by_token"][token]) == 1
    assert len(gateway.jobs_for(op_id)) == 1


async def test_5xx_after_accepting_reconciles_to_the_one_job(gateway: Gateway) -> None:
    r = await gateway.start({"name": "accept_then_5xx"})
    op_id = r.json()["operation_id"]
    assert r.json()["state"] == "create_unknown"
    final = await gateway.run_until_done(op_id)
    assert final["status"] == "succeeded"
    token = await gateway.token_of(op_id)
    jobs = gateway.stats(token)["jobs_by_token"][token]
    assert jobs == [final["remote_job_id"]] == gateway.jobs_for(op_id)


async def test_create_deadline_with_no_answer_is_create_unconfirmed(gateway: Gateway) -> None:
    r = await gateway.start({"name": "create_timeout"}, deadlines={"create_seconds": 60})
    op_id = r.json()["operation_id"]
    final = await gateway.run_until_done(op_id, step=10)
    assert final["state"] == "create_unconfirmed"
    assert final["status"] == "needs_attention"  # never "failed": the job may exist
    assert final["done"] is True
    assert final["error"]["code"] == "create_unconfirmed"
    assert "NEEDS A HUMAN" in final["message"]


async def test_definitive_rejection_fails_with_the_providers_error(gateway: Gateway) -> None:
    r = await gateway.start({"name": "reject"})
    body = r.json()
    assert r.status_code == 202
    assert body["state"] == "failed" and body["status"] == "failed" and body["done"] is True
    assert body["error"]["code"] == "invalid_input"
    assert "has FINISHED and FAILED" in body["message"]
    assert "Report the failure" in body["message"]


async def test_lookup_first_finds_the_job_before_a_replay_could_make_another(
    gateway: Gateway,
) -> None:
    # The provider would make a second job on a replay; the lookup finds the first one
    # before any replay is sent.
    r = await gateway.start({"name": "different_job_id"})
    op_id = r.json()["operation_id"]
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "succeeded"
    token = await gateway.token_of(op_id)
    assert gateway.stats(token)["creates_by_token"][token] == 1
    assert gateway.jobs_for(op_id) == [final["remote_job_id"]]


async def test_different_job_id_for_same_token_is_contract_violation(gateway: Gateway) -> None:
    # The first job is not listed yet when the lookup runs, so the token is replayed,
    # and the provider breaks its promise: the check after the replay sees both.
    r = await gateway.start({"name": "different_job_id", "list_delay": 1})
    op_id = r.json()["operation_id"]
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "contract_violation"
    assert final["status"] == "needs_attention"
    token = await gateway.token_of(op_id)
    jobs = gateway.stats(token)["jobs_by_token"][token]
    assert len(jobs) == 2
    assert sorted(final["error"]["details"]["job_ids"]) == sorted(jobs)
    # Both responses are kept: the create that named B and the lookup that listed A and B.
    exchanges = [i for i in await _history(gateway, op_id) if i["kind"] == "exchange"]
    bodies = " ".join(str(e["data"]["response_body"]) for e in exchanges)
    assert all(job in bodies for job in jobs)
    # Automation stopped: more ticks send nothing more to the provider.
    before = gateway.stats(token)["creates_by_token"][token]
    await gateway.tick(600)
    assert gateway.stats(token)["creates_by_token"][token] == before


async def test_synchronous_result_is_collected_in_the_create_request(gateway: Gateway) -> None:
    r = await gateway.start({"name": "sync"})
    body = r.json()
    assert body["state"] == "succeeded", body
    assert body["done"] is True and body["result"] is not None
    path = _path(await _history(gateway, body["operation_id"]))
    assert path == ["create_pending", "result_collecting", "succeeded"]
