"""One remote job per operation, whatever the provider promises: every create fault in
every provider mode, in-process on a fake clock, against the real mock provider.

Modes: `token` (the bundled mock honours the token), `lookup` (no token, a paged lookup
by the client reference in metadata), `none` (no token, no lookup). The mock's counters
per client reference prove at most one job; the end state is the one
docs/single-create.md promises; the history explains each step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx2
import pytest

from tests.conftest import Gateway
from tests.support.single_create import (
    FAULTS,
    MODES,
    PROMISED,
    SHORT,
    check_history,
    exchanges,
    profiles_for_tests,
    rows,
)


@pytest.fixture
def gateway_settings(tmp_path: Path) -> dict[str, Any]:
    return {"profiles_dir": profiles_for_tests(tmp_path / "profiles")}


async def start(
    gw: Gateway, provider: str, scenario: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    body = {"provider": provider, "kind": "report", "input": {"scenario": scenario}, **extra}
    r = await gw.http.post("/v1/operations", json=body, headers={"Idempotency-Key": uuid4().hex})
    assert r.status_code == 202, r.text
    return dict(r.json())


async def history(gw: Gateway, op_id: str) -> list[dict[str, Any]]:
    return list((await gw.http.get(f"/v1/operations/{op_id}/history")).json()["items"])


def check_unconfirmed_error(final: dict[str, Any], op_id: str) -> None:
    """The error tells the operator what to search for at the provider."""
    assert final["status"] == "needs_attention" and final["done"] is True
    error = final["error"]
    assert error["code"] == "create_unconfirmed"
    details = error["details"]
    assert details["client_reference"] == op_id
    assert details["client_reference_field"] == "metadata /metadata/client_reference"
    assert set(details["created_between"]) == {"from", "to"}
    assert details["list_call"]
    assert op_id in error["message"] and details["list_call"] in error["message"]
    assert "NOT send it again" in error["message"] or "NEVER again" in error["message"]


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("mode", sorted(MODES))
async def test_every_create_fault_in_every_mode(gateway: Gateway, mode: str, fault: str) -> None:
    provider = MODES[mode] + (SHORT if fault == "timeout" else "")
    first = await start(gateway, provider, FAULTS[fault])
    op_id = first["operation_id"]
    assert first["guarantees"] == {"single_create": mode}
    final = await gateway.run_until_done(op_id)
    assert len(gateway.jobs_for(op_id)) == 1  # the faulty create made it; nothing else did
    assert final["state"] == PROMISED[mode], final
    check_history(mode, await history(gateway, op_id))
    if mode == "none":
        check_unconfirmed_error(final, op_id)
        assert first["state"] == "create_unconfirmed"  # at once, in the create answer
    else:
        assert final["remote_job_id"] == gateway.jobs_for(op_id)[0]


@pytest.mark.parametrize("mode", sorted(MODES))
async def test_an_outage_past_the_create_deadline_still_gets_one_last_lookup(
    gateway: Gateway, mode: str
) -> None:
    first = await start(
        gateway, MODES[mode], FAULTS["lost_response"], deadlines={"create_seconds": 60}
    )
    op_id = first["operation_id"]
    gateway.clock.advance(600)  # no process ran while the deadline passed
    final = await gateway.run_until_done(op_id)
    assert final["state"] == PROMISED[mode], final
    assert len(gateway.jobs_for(op_id)) == 1
    items = await history(gateway, op_id)
    check_history(mode, items, outage=True)
    if mode != "none":
        last_look = next(i for i in items if i["to_state"] == "reconciling")
        assert "one last read-only lookup" in last_look["cause"]


async def test_a_token_profile_without_lookup_hands_over_at_the_deadline(
    gateway: Gateway,
) -> None:
    """Past the deadline only reads are allowed; a replay is not one."""
    first = await start(
        gateway, "mock_nolookup", FAULTS["lost_response"], deadlines={"create_seconds": 60}
    )
    gateway.clock.advance(600)
    final = await gateway.run_until_done(first["operation_id"])
    assert final["state"] == "create_unconfirmed"
    assert len(gateway.jobs_for(first["operation_id"])) == 1


async def test_an_eventually_consistent_listing_is_searched_again(gateway: Gateway) -> None:
    scenario = {"name": "lost_create_response", "list_delay": 3}
    op_id = (await start(gateway, "mock_lookup", scenario))["operation_id"]
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "succeeded"
    assert gateway.jobs_for(op_id) == [final["remote_job_id"]]
    items = await history(gateway, op_id)
    misses = [i for i in items if "listed yet" in i["cause"]]
    assert len(misses) >= 2  # each miss is a transition back to create_unknown
    assert len(rows(items, "resend_refused")) == len(misses) + 1
    assert len(exchanges(items, "create")) == 1


async def test_a_job_that_never_shows_ends_unconfirmed_never_resent(gateway: Gateway) -> None:
    scenario = {"name": "create_timeout"}  # 503, and the provider made nothing
    op_id = (await start(gateway, "mock_lookup", scenario))["operation_id"]
    final = await gateway.run_until_done(op_id, step=10)
    assert final["state"] == "create_unconfirmed"
    check_unconfirmed_error(final, op_id)
    items = await history(gateway, op_id)
    assert len(exchanges(items, "create")) == 1
    assert len(rows(items, "resend_refused")) >= 2
    assert gateway.jobs_for(op_id) == []


async def test_two_jobs_for_one_reference_after_one_create_is_the_providers_violation(
    gateway: Gateway, mock_client: httpx2.Client
) -> None:
    op_id = (await start(gateway, "mock_lookup", FAULTS["accept_then_5xx"]))["operation_id"]
    # The provider (or someone with our reference) made a second job.
    mock_client.post(
        "/v1/jobs",
        json={"kind": "report", "input": {}, "metadata": {"client_reference": op_id}},
    ).raise_for_status()
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "contract_violation"
    details = final["error"]["details"]
    assert details["creates_sent"] == 1
    assert sorted(details["job_ids"]) == sorted(gateway.jobs_for(op_id))
    assert "although jobgate sent 1 create" in final["error"]["message"]


async def test_the_create_answer_says_the_guarantee_in_plain_words(gateway: Gateway) -> None:
    lookup = await start(gateway, "mock_lookup", {"name": "slow"})
    assert lookup["guarantees"] == {"single_create": "lookup"}
    assert "is IN PROGRESS" in lookup["message"]
    blind = await start(gateway, "mock_blind", {"name": "slow"})
    assert blind["guarantees"] == {"single_create": "none"}
    token = await start(gateway, "mock", {"name": "slow"})
    assert token["guarantees"] == {"single_create": "token"}
    # The guarantee is a field: in-progress words never mix in a human or a failure.
    for body in (lookup, blind, token):
        assert "idempotency tokens" not in body["message"], body["message"]
    for body in (lookup, blind, token):
        final = await gateway.run_until_done(body["operation_id"])
        assert final["state"] == "succeeded"
        assert "idempotency tokens" not in final["message"]


@pytest.mark.parametrize("mode", sorted(MODES))
async def test_a_create_refused_as_overloaded_goes_again_in_every_mode(
    gateway: Gateway, mock_client: httpx2.Client, mode: str
) -> None:
    """The mock's `overloaded` answer is listed as proof that nothing was made: the
    create goes again, in every mode, and one job exists (counted at the mock)."""
    first = await start(gateway, MODES[mode], {"name": "fast", "overloaded": 2})
    op_id = first["operation_id"]
    assert (first["state"], first["done"]) == ("create_pending", False), first
    final = await gateway.run_until_done(op_id, step=1)
    assert final["state"] == "succeeded", final
    stats = mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()
    assert stats["refused_by_reference"] == {op_id: 2}
    assert stats["jobs_by_reference"][op_id] == [final["remote_job_id"]]
    items = await history(gateway, op_id)
    assert [i["to_state"] for i in items if i["kind"] == "transition"][:4] == [
        "create_pending",
        "create_pending",
        "create_pending",
        "accepted",
    ]
    assert len(exchanges(items, "create")) == 3
    assert [r["data"]["attempt"] for r in rows(items, "create_resend")] == [2, 3]
    assert rows(items, "resend_refused") == []  # nothing was in doubt
