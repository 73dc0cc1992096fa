"""What an agent sees when a bundled profile's create answer was lost (docs/single-create.md).

The fake made the job and its answer never arrived whole (a `drop` or `error_after`
fault on its create operation). These helpers read only what an agent reads (/wait,
/result, /history, /v1/attention) and what the fake itself counted; the per-profile
tests say which fault and which counter.
"""

from __future__ import annotations

import uuid
from typing import Any

from tests.conftest import Gateway
from tests.integration.profiles.conftest import STEP, history, never_success


async def create(gateway: Gateway, provider: str, kind: str, input: Any) -> dict[str, Any]:
    """POST /v1/operations as an agent would; the 202 body, done or not."""
    body = {"provider": provider, "kind": kind, "input": input}
    r = await gateway.http.post(
        "/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
    )
    assert r.status_code == 202, r.text
    return dict(r.json())


async def sent_creates(gateway: Gateway, op_id: str) -> int:
    """Create exchanges on the operation's history (a `prepare` upload is not one)."""
    rows = await history(gateway, op_id)
    return sum(1 for e in rows if e["kind"] == "exchange" and e["data"]["operation"] == "create")


async def goes_to_a_person(gateway: Gateway, made: dict[str, Any]) -> dict[str, Any]:
    """A `single_create: none` profile: the lost create is never resent and ends with a
    person (`create_unconfirmed`), in words that never say success. Returns the body."""
    op_id = made["operation_id"]
    # Already in the create request's answer, or after reconciliation found nothing to do.
    assert made["state"] in ("create_unknown", "create_unconfirmed"), made
    assert made["remote_job_id"] is None
    never_success(made)
    await gateway.run_until_done(op_id, step=STEP, max_ticks=10)
    r = await gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 1})
    assert r.status_code == 200, r.text
    done = dict(r.json())
    assert (done["state"], done["status"], done["outcome"]) == (
        "create_unconfirmed",
        "needs_attention",
        "needs_attention",
    ), done
    assert done["done"] is True and done["remote_job_id"] is None
    assert done["guarantees"]["single_create"] == "none"
    never_success(done)
    assert "will NOT send it again" in done["error"]["message"]
    assert done["error"]["details"]["client_reference"] == op_id
    r = await gateway.http.get(f"/v1/operations/{op_id}/result")
    assert r.status_code == 409, r.text
    inbox = (await gateway.http.get("/v1/attention")).json()
    assert op_id in [item["operation"]["operation_id"] for item in inbox["items"]]
    assert await sent_creates(gateway, op_id) == 1
    return done
