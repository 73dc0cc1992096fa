"""A throttled status read, as an agent's operation lives through it
(docs/agent-api.md, "Retry rules").

The provider's retry hint wins over the computed backoff: after the 429 nothing is sent
before the hinted time and exactly one read is sent after it. Time is the gateway's
fake clock; reads are counted at the fake (`GET /_fake/stats`), never in our tables.
"""

from __future__ import annotations

from typing import Any

import httpx2

from tests.conftest import Gateway
from tests.integration.profiles.conftest import fault, history


async def reads(fake: httpx2.AsyncClient, op: str) -> int:
    """Calls of `op` about the one job the fake holds (it is reset before each test)."""
    stats = (await fake.get("/_fake/stats")).json()
    assert stats["create_calls"] == 1
    [calls] = stats["jobs"].values()
    return int(calls.get(f"{op}_calls", 0))


async def honours_retry_hint(
    gateway: Gateway, fake: httpx2.AsyncClient, op_id: str, *, op: str, hint: int, step: float
) -> dict[str, Any]:
    """Throttle the next `op` read with a `hint`-second retry hint; prove it is obeyed to
    the second. Returns the 429's exchange (its request and response, as recorded)."""
    await fault(fake, op=op, kind="rate_limit", retry_after=hint)
    before = await reads(fake, op)
    for _ in range(10):  # poll until the throttled read happened
        await gateway.tick(step)
        if await reads(fake, op) > before:
            break
    rows = await history(gateway, op_id)
    [limited] = [e for e in rows if e["kind"] == "exchange" and e["data"]["status_code"] == 429]
    observed = [e for e in rows if e["kind"] == "observation"]
    assert observed[-1]["data"]["next_poll_in_seconds"] == hint
    after = await reads(fake, op)
    await gateway.tick(hint - 1)  # the provider asked for `hint` seconds: nothing before
    assert await reads(fake, op) == after
    await gateway.tick(2)
    assert await reads(fake, op) == after + 1
    return dict(limited["data"])
