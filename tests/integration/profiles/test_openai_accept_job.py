"""`accept_job` compares the client reference OpenAI shows (`metadata.jobgate_ref`, the
bundled profile's `lookup.match`) with the operation's id: a batch made for another
operation is refused with nothing written; the operation's own is accepted.

The OpenAI Batch fake refuses the operation's create (503, nothing made); the lookups
find nothing until the create deadline, and a person decides. The other batches are
made directly at the fake, as someone else (or a person) would.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx2

from tests.conftest import Gateway
from tests.integration.profiles.conftest import KEY, STEP, ended_as, fault, finish, history

NAME = "openai_batch"
AUTH = {"Authorization": f"Bearer {KEY}"}
LINE = {
    "custom_id": "a",
    "method": "POST",
    "url": "/v1/chat/completions",
    "body": {"model": "gpt-4o-mini", "max_tokens": 100, "messages": []},
}


async def batch_for(fake: httpx2.AsyncClient, reference: str) -> str:
    """A batch made directly at the fake, carrying `reference` in its metadata."""
    upload = await fake.post(
        "/v1/files",
        data={"purpose": "batch"},
        files={"file": ("in.jsonl", json.dumps(LINE).encode(), "application/jsonl")},
        headers=AUTH,
    )
    assert upload.status_code == 200, upload.text
    made = await fake.post(
        "/v1/batches",
        json={
            "input_file_id": upload.json()["id"],
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
            "metadata": {"jobgate_ref": reference},
        },
        headers=AUTH,
    )
    assert made.status_code == 200, made.text
    return str(made.json()["id"])


async def test_a_batch_made_for_another_operation_is_refused(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="create", kind="error_before", status=503)
    body: dict[str, Any] = {
        "provider": NAME,
        "kind": "batch",
        "input": {"endpoint": "/v1/chat/completions", "requests": [LINE]},
        "deadlines": {"create_seconds": 60},
    }
    r = await gateway.http.post(
        "/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
    )
    op_id = r.json()["operation_id"]
    stuck = await gateway.run_until_done(op_id, step=STEP)
    assert stuck["state"] == "create_unconfirmed", stuck
    elsewhere = await batch_for(fake, "op_01SOMEONEELSE0000000000000")
    before = len(await history(gateway, op_id))

    decision = {"decision": "accept_job", "reason": "found it", "remote_job_id": elsewhere}
    r = await gateway.http.post(f"/v1/operations/{op_id}/resolve", json=decision)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert (error["code"], error["details"]["check"]) == ("remote_job_mismatch", "client_reference")
    assert error["details"]["shown"] == "op_01SOMEONEELSE0000000000000"
    assert error["details"]["expected"] == op_id
    assert len(await history(gateway, op_id)) == before  # nothing written

    decision["remote_job_id"] = ours = await batch_for(fake, op_id)
    r = await gateway.http.post(f"/v1/operations/{op_id}/resolve", json=decision)
    assert r.status_code == 200 and r.json()["remote_job_id"] == ours, r.text
    checked = (await history(gateway, op_id))[-1]["data"]["data"]["checked"]
    assert checked["client_reference"] == op_id
    ended_as(await finish(gateway, op_id), "succeeded")
