"""A provider that answers a ~10 MB error message: what jobgate stores and serves stays
small (docs/agent-api.md, "Provider text is bounded").

The bundled mock pads a failed job's `error.message` (and its failed items' messages) to
`error_bytes` characters; every body, list, history page, MCP-shaped body and HTML page
that shows the operation must stay under a stated bound, and the cut must be marked.
"""

from __future__ import annotations

import re

from app.operations import repository as repo
from app.providers.answers import bounds
from tests.conftest import Gateway

HUGE = 10_000_000  # characters of error text the provider sends
BODY_BOUND = 16 * 1024  # one operation body
LIST_OF_50_BOUND = 50 * BODY_BOUND
PAGE_BOUND = 256 * 1024  # the operator's detail page and the list page
CUT = re.compile(r"\u2026 \[cut: (\d+) bytes\]$")


async def _failed_with_huge_error(gateway: Gateway) -> str:
    made = await gateway.start({"name": "late_failure", "polls": 0, "error_bytes": HUGE})
    assert made.status_code == 202, made.text
    return str(made.json()["operation_id"])


async def test_a_10_mb_error_message_is_stored_and_served_cut_and_marked(
    gateway: Gateway,
) -> None:
    op_id = await _failed_with_huge_error(gateway)
    done = await gateway.run_until_done(op_id)
    assert (done["state"], done["outcome"]) == ("failed", "failed"), done["state"]
    message = done["error"]["message"]
    assert message.startswith("the report failed to render x")
    found = CUT.search(message)
    assert found is not None, message[-80:]
    kept = len(message[: found.start()].encode())
    assert len(message.encode()) <= bounds.MESSAGE_BYTES  # the marker included
    assert kept + int(found.group(1)) == HUGE  # the marker says exactly what was dropped

    body = await gateway.http.get(f"/v1/operations/{op_id}")
    assert len(body.content) < BODY_BOUND, len(body.content)
    history = await gateway.http.get(f"/v1/operations/{op_id}/history")
    assert history.status_code == 200
    assert len(history.content) < PAGE_BOUND, len(history.content)
    page = await gateway.http.get(f"/operations/{op_id}")
    assert page.status_code == 200
    assert len(page.content) < PAGE_BOUND, len(page.content)
    assert "cut: " in page.text

    async with gateway.ctx.db.transaction() as txn:  # storage is bounded too, not only views
        row = await repo.get(txn, op_id)
    assert row is not None and len(str(row.error)) < BODY_BOUND


async def test_a_list_of_50_such_operations_stays_small(gateway: Gateway) -> None:
    ids = [await _failed_with_huge_error(gateway) for _ in range(50)]
    for _ in range(20):
        if not await gateway.tick(5.0):
            break
    listed = await gateway.http.get("/v1/operations", params={"limit": 50})
    assert listed.status_code == 200, listed.text
    items = listed.json()["items"]
    assert {i["operation_id"] for i in items} == set(ids)
    assert all(i["state"] == "failed" for i in items), {i["state"] for i in items}
    assert len(listed.content) < LIST_OF_50_BOUND, len(listed.content)
    page = await gateway.http.get("/operations")
    assert page.status_code == 200
    assert len(page.content) < PAGE_BOUND, len(page.content)


async def test_failed_items_with_huge_errors_are_cut_one_by_one(gateway: Gateway) -> None:
    made = await gateway.start(
        {"name": "partial_results", "processed": 10, "failed": 5, "error_bytes": HUGE}
    )
    op_id = made.json()["operation_id"]
    done = await gateway.run_until_done(op_id)
    assert done["outcome"] == "completed_with_errors", done["state"]
    errors = await gateway.http.get(f"/v1/operations/{op_id}/errors", params={"limit": 50})
    items = errors.json()["items"]
    assert len(items) == 5
    assert len(errors.content) < 5 * bounds.VALUE_BYTES, len(errors.content)
    for row in items:
        assert CUT.search(row["item"]["error"]["message"]), row["item"]["error"]["message"][-60:]
