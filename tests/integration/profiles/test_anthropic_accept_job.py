"""`accept_job` compares the item count Anthropic shows with the input's (the bundled
profile counts `request_counts` and names `input_items: /requests`): a batch of 3
requests is not the batch of a 6-request input, and is refused with nothing written.

The Message Batches fake makes the operation's batch and answers its create 500 (a
`none` provider: a person decides); the other batch is made directly at the fake.
"""

from __future__ import annotations

from typing import Any

import httpx2

from tests.conftest import Gateway
from tests.integration.profiles.conftest import KEY, ended_as, fault, finish, history
from tests.integration.profiles.lost_create import create, goes_to_a_person

NAME = "anthropic_message_batches"
HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}


def requests(prefix: str, n: int) -> list[dict[str, Any]]:
    params = {"model": "claude-x", "max_tokens": 100, "messages": []}
    return [{"custom_id": f"{prefix}{i}", "params": params} for i in range(n)]


async def test_a_batch_with_another_item_count_is_refused(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="create", kind="error_after", status=500)  # made, answer lost
    made = await create(gateway, NAME, "batch", {"requests": requests("q", 6)})
    op_id = made["operation_id"]
    await goes_to_a_person(gateway, made)
    [ours] = (await fake.get("/_fake/stats")).json()["jobs"]
    other = await fake.post(
        "/v1/messages/batches", json={"requests": requests("x", 3)}, headers=HEADERS
    )
    assert other.status_code == 200, other.text
    before = len(await history(gateway, op_id))

    body = {"decision": "accept_job", "reason": "found it", "remote_job_id": other.json()["id"]}
    r = await gateway.http.post(f"/v1/operations/{op_id}/resolve", json=body)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "remote_job_mismatch"
    assert (error["details"]["check"], error["details"]["shown"]) == ("item_count", 3)
    assert error["details"]["expected"] == 6
    assert "holds 3 items and this operation's input has 6" in error["message"]
    assert r.json()["operation"]["state"] == "create_unconfirmed"
    assert len(await history(gateway, op_id)) == before  # nothing written

    body["remote_job_id"] = ours
    r = await gateway.http.post(f"/v1/operations/{op_id}/resolve", json=body)
    assert r.status_code == 200 and r.json()["state"] == "accepted", r.text
    rows = await history(gateway, op_id)
    assert rows[-1]["data"]["data"]["checked"]["items"] == {"provider": 6, "input": 6}
    done = await finish(gateway, op_id)
    ended_as(done, "succeeded")
    assert done["result_summary"]["succeeded"] == 6
