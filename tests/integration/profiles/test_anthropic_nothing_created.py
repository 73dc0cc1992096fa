"""Anthropic answers a create with a refusal that proves nothing was made: the create goes
again (docs/single-create.md, "Nothing was made").

The bundled profile lists 529 `overloaded_error` and 429 `rate_limit_error` under
`idempotency.nothing_created`. The Message Batches fake answers them from its fault
queue in the shape of Anthropic's Errors reference, makes no batch, and counts every
create call; batches are counted at the fake, never in our tables. Any other failure
(a plain 500 here) keeps the create at most once (`single_create: none`).
"""

from __future__ import annotations

from typing import Any

import httpx2

from tests.conftest import Gateway
from tests.integration.profiles.conftest import STEP, ended_as, fault, finish, history
from tests.integration.profiles.conftest import start as start_op
from tests.integration.profiles.lost_create import create, goes_to_a_person

NAME = "anthropic_message_batches"
PARAMS = {"model": "claude-x", "max_tokens": 100, "messages": []}
INPUT = {"requests": [{"custom_id": "q1", "params": PARAMS}]}


async def counted(fake: httpx2.AsyncClient) -> tuple[int, int]:
    """(create calls, batches made), as the fake counted them."""
    stats = (await fake.get("/_fake/stats")).json()
    return int(stats["create_calls"]), len(stats["jobs"])


def proofs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `create_pending -> create_pending` transitions: each proves a create made nothing."""
    return [
        r
        for r in rows
        if r["kind"] == "transition" and r["from_state"] == r["to_state"] == "create_pending"
    ]


async def test_an_overloaded_create_goes_again_and_makes_one_batch(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="create", kind="error_before", status=529)
    made = await start_op(gateway, NAME, INPUT)
    op_id = made["operation_id"]
    assert (made["state"], made["status"]) == ("create_pending", "processing"), made
    assert "is IN PROGRESS" in made["message"] and "KEEP WAITING" in made["message"]
    assert await counted(fake) == (1, 0)  # refused: nothing was made
    await gateway.tick(60)  # past the backoff (the profile's 30 s at most), inside 300 s
    assert await counted(fake) == (2, 1)
    done = await finish(gateway, op_id)
    ended_as(done, "succeeded")
    assert await counted(fake) == (2, 1)  # exactly one batch, for two creates
    rows = await history(gateway, op_id)
    [proof] = proofs(rows)
    assert proof["data"]["evidence"] == "nothing_created"
    assert "HTTP 529 with /error/type = overloaded_error" in proof["data"]["evidence_data"]["proof"]
    assert [r["data"]["attempt"] for r in rows if r["kind"] == "create_resend"] == [2]
    creates = [r for r in rows if r["kind"] == "exchange" and r["data"]["operation"] == "create"]
    assert [c["data"]["status_code"] for c in creates] == [529, 200]


async def test_a_rate_limited_create_waits_for_retry_after_then_goes_again(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="create", kind="rate_limit", retry_after=40)
    made = await start_op(gateway, NAME, INPUT)
    assert made["state"] == "create_pending" and made["poll_after_seconds"] == 40, made
    await gateway.tick(39)  # the provider asked for 40 s: nothing is sent before
    assert await counted(fake) == (1, 0)
    await gateway.tick(2)
    assert await counted(fake) == (2, 1)
    ended_as(await finish(gateway, made["operation_id"]), "succeeded")


async def test_refused_until_the_create_deadline_fails_with_nothing_started(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    await fault(fake, op="create", kind="error_before", status=529, times=50)
    made = await start_op(gateway, NAME, INPUT)
    done = await finish(gateway, made["operation_id"], step=20)
    ended_as(done, "failed")
    assert done["error"]["code"] == "create_not_started", done["error"]
    assert "Nothing was started" in done["error"]["message"]
    assert "overloaded_error" in done["error"]["message"]
    calls, batches = await counted(fake)
    assert calls >= 2 and batches == 0
    rows = await history(gateway, made["operation_id"])
    last = [r for r in rows if r["kind"] == "transition"][-1]
    assert (last["from_state"], last["data"]["evidence"]) == ("create_pending", "nothing_created")
    # Each refused create is recorded: as a proof that lets the create go again, or as the
    # ending itself when the refusal came past the deadline. When the deadline passes while
    # the operation waits out its backoff, the last refusal was a proof too.
    assert len(proofs(rows)) in (calls - 1, calls), (len(proofs(rows)), calls)


async def test_a_plain_500_is_still_never_sent_again(
    gateway: Gateway, fake: httpx2.AsyncClient
) -> None:
    """A 500 proves nothing (the batch may exist): one create, then a person decides."""
    await fault(fake, op="create", kind="error_before", status=500)
    made = await create(gateway, NAME, "batch", INPUT)
    await goes_to_a_person(gateway, made)
    assert await counted(fake) == (1, 0)
    await gateway.tick(STEP)
    assert await counted(fake) == (1, 0)
