"""`accept_job` checks identity, not a count (docs/operations.md, "accept_job: what
proves the job is this operation's"): two operations each with a 3-request batch of
its own cannot swap batches; a batch whose results carry ids the input does not
declare is refused although it holds as many requests; a batch still running shows
nothing to compare and is taken only with `force`; two decisions binding one batch at
once leave it bound to one operation.

The Message Batches fake makes each operation's batch and answers its create 500 (a
`none` provider: a person decides). One status read is one hour of a batch's clock:
requests of 100 tokens are done at the accept's read (its results can be compared),
requests of 5,000 tokens are not.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2

from tests.conftest import Gateway
from tests.integration.profiles.conftest import KEY, ended_as, fault, finish, history
from tests.integration.profiles.lost_create import create, goes_to_a_person

NAME = "anthropic_message_batches"
HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}


def requests(prefix: str, n: int, tokens: int = 100) -> list[dict[str, Any]]:
    params = {"model": "claude-x", "max_tokens": tokens, "messages": []}
    return [{"custom_id": f"{prefix}{i}", "params": params} for i in range(n)]


async def unconfirmed(
    gateway: Gateway, fake: httpx2.AsyncClient, prefix: str, tokens: int = 100
) -> tuple[str, str]:
    """An operation in `create_unconfirmed` and the batch the fake made for it."""
    known = {j for j in (await fake.get("/_fake/stats")).json()["jobs"]}
    await fault(fake, op="create", kind="error_after", status=500)  # made, answer lost
    made = await create(gateway, NAME, "batch", {"requests": requests(prefix, 3, tokens)})
    await goes_to_a_person(gateway, made)
    [batch] = [j for j in (await fake.get("/_fake/stats")).json()["jobs"] if j not in known]
    return made["operation_id"], batch


async def accept(
    gateway: Gateway, op_id: str, job_id: str, *, force: bool = False
) -> httpx2.Response:
    body: dict[str, Any] = {"decision": "accept_job", "reason": "found", "remote_job_id": job_id}
    if force:
        body["force"] = True
    return await gateway.http.post(f"/v1/operations/{op_id}/resolve", json=body)


def custom_ids(done: dict[str, Any]) -> set[str]:
    return {line["custom_id"] for line in done["result"]}


async def result_of(gateway: Gateway, op_id: str) -> dict[str, Any]:
    r = await gateway.http.get(f"/v1/operations/{op_id}/result")
    assert r.status_code == 200, r.text
    return dict(r.json())


async def test_two_operations_cannot_swap_batches(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    c, c_batch = await unconfirmed(gateway, fake, "c")
    d, d_batch = await unconfirmed(gateway, fake, "d")
    before = {op: len(await history(gateway, op)) for op in (c, d)}

    for op_id, wrong, theirs in ((c, d_batch, "d"), (d, c_batch, "c")):
        r = await accept(gateway, op_id, wrong, force=True)  # force overrides no mismatch
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        assert (error["code"], error["details"]["check"]) == ("remote_job_mismatch", "item_ids")
        assert error["details"]["shown"] == [f"{theirs}0", f"{theirs}1", f"{theirs}2"]
        assert (
            f"carry item ids this operation's input does not declare ({theirs}0"
            in (error["message"])
        )
        assert "Nothing was written" in error["message"]
        assert r.json()["operation"]["state"] == "create_unconfirmed"
        assert len(await history(gateway, op_id)) == before[op_id]

    for op_id, own, prefix in ((c, c_batch, "c"), (d, d_batch, "d")):
        r = await accept(gateway, op_id, own)
        assert r.status_code == 200 and r.json()["remote_job_id"] == own, r.text
        assert "force" not in r.json()["message"]
        checked = (await history(gateway, op_id))[-1]["data"]["data"]["checked"]
        assert checked["proven_by"] == ["item_ids"]
        assert checked["item_ids"] == {"compared": True, "shown": 3, "declared": 3, "foreign": []}
        done = await finish(gateway, op_id)
        ended_as(done, "succeeded")
        assert custom_ids(await result_of(gateway, op_id)) == {f"{prefix}{i}" for i in range(3)}


async def test_a_same_count_batch_made_elsewhere_is_refused(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id, _ = await unconfirmed(gateway, fake, "q")
    other = await fake.post(
        "/v1/messages/batches", json={"requests": requests("x", 3)}, headers=HEADERS
    )
    assert other.status_code == 200, other.text
    before = len(await history(gateway, op_id))
    r = await accept(gateway, op_id, other.json()["id"])
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["check"] == "item_ids"
    assert len(await history(gateway, op_id)) == before


async def test_a_running_batch_is_taken_only_by_force(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    op_id, batch = await unconfirmed(gateway, fake, "r", tokens=5000)  # 5 hours of work
    before = len(await history(gateway, op_id))
    r = await accept(gateway, op_id, batch)
    assert r.status_code == 409, r.text
    error = r.json()["error"]
    assert error["code"] == "remote_job_unproven"
    assert "a matching count proves nothing" in error["message"]
    assert "force: true" in error["message"] and "Nothing was written" in error["message"]
    checked = error["details"]["checked"]
    assert checked["items"] == {"provider": 3, "input": 3}  # the count matched: no proof
    assert checked["item_ids"]["compared"] is False and checked["proven_by"] == []
    assert r.json()["operation"]["state"] == "create_unconfirmed"
    assert len(await history(gateway, op_id)) == before

    r = await accept(gateway, op_id, batch, force=True)
    assert r.status_code == 200 and r.json()["state"] == "accepted", r.text
    assert r.json()["message"].startswith(
        f"Job {batch} was taken by force: the provider showed nothing that proves it"
    )
    decision = (await history(gateway, op_id))[-1]
    assert "forced without proof" in decision["cause"]
    assert decision["data"]["data"]["checked"]["forced"] is True
    ended_as(await finish(gateway, op_id), "succeeded")


async def test_one_batch_bound_by_two_decisions_at_once_goes_to_one(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    a, batch = await unconfirmed(gateway, fake, "a", tokens=5000)
    b, _ = await unconfirmed(gateway, fake, "b", tokens=5000)
    answers = await asyncio.gather(*(accept(gateway, op, batch, force=True) for op in (a, b)))
    codes = sorted(r.status_code for r in answers)
    assert codes == [200, 409], [r.text for r in answers]
    [lost] = [r for r in answers if r.status_code == 409]
    assert lost.json()["error"]["code"] == "remote_job_bound"
    [won] = [r for r in answers if r.status_code == 200]
    winner = won.json()["operation_id"]
    assert lost.json()["error"]["details"]["bound_to"] == winner
    loser = b if winner == a else a
    body = (await gateway.http.get(f"/v1/operations/{loser}")).json()
    assert body["state"] == "create_unconfirmed" and body["remote_job_id"] is None
