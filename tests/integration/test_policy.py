"""Policy before effect (docs/policy.md), through the REST API with the mock provider:
limits refuse with nothing recorded and nothing sent, and a create held for approval
reaches the provider only after an operator approves it."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import create_engine, text

from app.auth import service as keys
from app.core.db.database import sync_url
from app.operations.driver import create_steps
from app.operations.driver.single_create import APPROVED_SEND_ROW
from app.operations.services import admission
from app.policy.rules import Subject
from tests.conftest import Gateway
from tests.integration.test_ops_cli_database import CLI_ACTOR, cli

POLICY = """\
version: 1
rules:
  - name: capped
    provider: mock
    labels: {lane: capped}
    max_in_flight: 2
  - name: gated
    provider: mock
    labels: {lane: gated}
    approval: always
  - name: paced
    labels: {lane: paced}
    creates_per_minute: 2
  - name: metered
    labels: {lane: metered}
    cost: {per_create: 1, per_item: {pointer: /items, units: 2}}
    budget: {per_day: 10}
  - name: bound
    keys: [agent-bound]
    creates_per_minute: 1
"""
APPROVAL_SECONDS = 3600.0


@pytest.fixture
def gateway_settings(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    return {"auth": "keys", "policy_file": path, "approval_seconds": APPROVAL_SECONDS}


class Keys:
    def __init__(self, agent: str, operator: str, other_operator: str) -> None:
        self.agent, self.operator, self.other_operator = agent, operator, other_operator


@pytest.fixture
async def k(gateway: Gateway) -> Keys:
    made = []
    for name, role in (("agent-1", "agent"), ("ops-1", "operator"), ("ops-2", "operator")):
        _, key = await keys.create(gateway.ctx.db, name, role, gateway.clock.now())
        made.append(key)
    return Keys(*made)


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def create(
    gw: Gateway,
    key: str,
    lane: str,
    *,
    scenario: str = "never_finishes",
    idem: str | None = None,
    **input_: Any,
) -> httpx2.Response:
    body = {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": {"name": scenario}, **input_},
        "labels": {"lane": lane},
    }
    headers = {"Idempotency-Key": idem or uuid.uuid4().hex, **auth(key)}
    return await gw.http.post("/v1/operations", json=body, headers=headers)


def mock_creates(gw: Gateway) -> int:
    """Every create the mock provider received (this worker's mock; tests run one at a time)."""
    stats = gw.mock.get("/_mock/stats").json()
    return sum(stats["creates_by_token"].values()) + sum(stats["refused_by_reference"].values())


async def operation_count(gw: Gateway, key: str) -> int:
    r = await gw.http.get("/v1/operations", params={"limit": 200}, headers=auth(key))
    assert r.status_code == 200, r.text
    return len(r.json()["items"])


async def until_done(gw: Gateway, op_id: str, key: str, step: float = 5.0) -> dict[str, Any]:
    """`Gateway.run_until_done` with a key (this gateway wants one)."""
    for _ in range(200):
        body: dict[str, Any] = (
            await gw.http.get(f"/v1/operations/{op_id}", headers=auth(key))
        ).json()
        if body["done"]:
            return body
        await gw.tick(step)
    raise AssertionError(f"{op_id} not done: {body}")


def refused_plainly(r: httpx2.Response, code: str) -> dict[str, Any]:
    assert r.status_code == 429, r.text
    body: dict[str, Any] = r.json()
    assert body["error"]["code"] == code
    assert body["error"]["message"].startswith("NOT started and nothing recorded")
    assert "Nothing was sent to the provider" in body["error"]["message"]
    assert "operation" not in body and "operation_id" not in body
    return body


async def test_the_third_create_over_max_in_flight_is_refused_and_nothing_written(
    gateway: Gateway, k: Keys
) -> None:
    first = await create(gateway, k.agent, "capped", idem="capped-1")
    second = await create(gateway, k.agent, "capped")
    assert first.status_code == second.status_code == 202, first.text
    sent, recorded = mock_creates(gateway), await operation_count(gateway, k.operator)

    third = await create(gateway, k.agent, "capped")
    body = refused_plainly(third, "policy_in_flight_limit")
    assert "Retry-After" not in third.headers  # no time is known: when one of them is done
    assert body["error"]["details"]["rule"] == "capped"
    assert body["error"]["details"]["in_flight"] == 2
    assert mock_creates(gateway) == sent
    assert await operation_count(gateway, k.operator) == recorded == 2

    # A replay of a recorded create is no new create: it answers as always.
    replay = await create(gateway, k.agent, "capped", idem="capped-1")
    assert replay.status_code == 200 and replay.headers["Idempotent-Replayed"] == "true"
    # Another lane is not this rule's.
    assert (await create(gateway, k.agent, "free")).status_code == 202
    # One ends: a place frees.
    op_id = first.json()["operation_id"]
    cancel = await gateway.http.post(f"/v1/operations/{op_id}/cancel", headers=auth(k.agent))
    assert cancel.status_code == 202
    await until_done(gateway, op_id, k.agent)
    assert (await create(gateway, k.agent, "capped")).status_code == 202

    metrics = (await gateway.http.get("/metrics")).text
    assert 'jobgate_policy_refusals_total{limit="max_in_flight",rule="capped"}' in metrics


async def test_a_rule_on_the_key_binds_an_agent_whatever_labels_it_sends(
    gateway: Gateway, k: Keys
) -> None:
    """Labels are the agent's own (docs/policy.md): a rule that must bind an agent selects
    its key's principal (`keys`), which no body can change."""
    _, bound = await keys.create(gateway.ctx.db, "agent-bound", "agent", gateway.clock.now())
    assert (await create(gateway, bound, "anything", scenario="sync")).status_code == 202
    for lane in ("other", "capped-not"):
        refused_plainly(await create(gateway, bound, lane, scenario="sync"), "policy_rate_limit")
    body = {"provider": "mock", "kind": "report", "input": {"scenario": {"name": "sync"}}}
    bare = await gateway.http.post(  # no labels at all
        "/v1/operations", json=body, headers={"Idempotency-Key": "bare", **auth(bound)}
    )
    assert refused_plainly(bare, "policy_rate_limit")["error"]["details"]["rule"] == "bound"
    # Another key is not this rule's, whatever its labels.
    assert (await create(gateway, k.agent, "anything", scenario="sync")).status_code == 202
    assert (await create(gateway, k.agent, "anything", scenario="sync")).status_code == 202


async def test_a_rate_refusal_says_when_to_send_again(gateway: Gateway, k: Keys) -> None:
    assert (await create(gateway, k.agent, "paced", scenario="sync")).status_code == 202
    gateway.clock.advance(20)
    assert (await create(gateway, k.agent, "paced", scenario="sync")).status_code == 202
    sent, recorded = mock_creates(gateway), await operation_count(gateway, k.operator)
    gateway.clock.advance(10)
    r = await create(gateway, k.agent, "paced", scenario="sync", idem="paced-3")
    body = refused_plainly(r, "policy_rate_limit")
    # The first create leaves the minute 30 s from now.
    assert r.headers["Retry-After"] == "30" == str(body["error"]["details"]["retry_after_seconds"])
    assert "in 30 seconds" in body["error"]["message"]
    assert mock_creates(gateway) == sent and await operation_count(gateway, k.operator) == recorded
    gateway.clock.advance(30)
    again = await create(gateway, k.agent, "paced", scenario="sync", idem="paced-3")
    assert again.status_code == 202, again.text


async def test_a_budget_refusal_counts_cost_per_item_and_says_when_the_day_starts_over(
    gateway: Gateway, k: Keys
) -> None:
    # 1 per create + 2 per item: 4 items cost 9 of the day's 10.
    r = await create(gateway, k.agent, "metered", scenario="sync", items=[1, 2, 3, 4])
    assert r.status_code == 202, r.text
    sent = mock_creates(gateway)
    r = await create(gateway, k.agent, "metered", scenario="sync", items=[1])
    body = refused_plainly(r, "policy_budget_exhausted")
    assert body["error"]["details"] == {
        "rule": "metered",
        "budget": 10.0,
        "spent": 9.0,
        "cost": 3.0,
        "retry_after_seconds": int(r.headers["Retry-After"]),
    }
    now = gateway.clock.now()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0).timestamp() + 86400
    assert abs(int(r.headers["Retry-After"]) - (midnight - now.timestamp())) <= 1
    assert mock_creates(gateway) == sent
    # One more within the budget still goes (1 per create, no items: 9 + 1 = 10).
    assert (await create(gateway, k.agent, "metered", scenario="sync")).status_code == 202


async def _gated(gw: Gateway, key: str, scenario: str = "fast") -> dict[str, Any]:
    r = await create(gw, key, "gated", scenario=scenario)
    assert r.status_code == 202, r.text
    body: dict[str, Any] = r.json()
    assert body["state"] == "awaiting_approval" and body["status"] == "awaiting_approval"
    assert body["done"] is False and body["outcome"] is None
    return body


async def _decide(gw: Gateway, op_id: str, key: str, verb: str, reason: str) -> httpx2.Response:
    return await gw.http.post(
        f"/v1/operations/{op_id}/{verb}", json={"reason": reason}, headers=auth(key)
    )


async def _history(gw: Gateway, op_id: str, key: str) -> list[dict[str, Any]]:
    r = await gw.http.get(f"/v1/operations/{op_id}/history", headers=auth(key))
    return list(r.json()["items"])


def audit_rows(gw: Gateway, op_id: str) -> list[dict[str, Any]]:
    engine = create_engine(sync_url(gw.ctx.settings.database_url))
    try:
        with engine.connect() as conn:
            found = conn.execute(
                text("SELECT kind, actor, payload FROM audit_log WHERE operation_id = :o "
                     "ORDER BY seq"),
                {"o": op_id},
            )  # fmt: skip
            return [dict(r._mapping) for r in found]
    finally:
        engine.dispose()


async def test_approval_sends_exactly_one_create_and_only_after_it(
    gateway: Gateway, k: Keys
) -> None:
    body = await _gated(gateway, k.agent)
    op_id = body["operation_id"]
    assert "NOT STARTED" in body["message"] and "NEEDS A HUMAN" in body["message"]
    assert "do not retry" in body["message"] and "Tell the user" in body["message"]
    assert body["next_action"]["call"] == f"GET /v1/operations/{op_id}"
    token = await gateway.token_of(op_id)
    await gateway.tick(60)
    assert gateway.stats(token)["creates_by_token"].get(token, 0) == 0  # nothing before

    inbox = (await gateway.http.get("/v1/attention", headers=auth(k.operator))).json()["items"]
    assert [i["operation"]["operation_id"] for i in inbox] == [op_id]
    assert "held for approval" in inbox[0]["why"] and "gated" in inbox[0]["why"]

    # The agent's own key may not decide.
    r = await _decide(gateway, op_id, k.agent, "approve", "looks fine to me")
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    r = await _decide(gateway, op_id, k.operator, "approve", "checked the report scope")
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "create_pending"
    assert gateway.stats(token)["creates_by_token"].get(token, 0) == 0  # the observer sends it

    final = await until_done(gateway, op_id, k.agent)
    assert final["status"] == "succeeded" and final["outcome"] == "succeeded"
    assert gateway.stats(token)["creates_by_token"][token] == 1

    hist = await _history(gateway, op_id, k.operator)
    kinds = [(h["kind"], h["to_state"]) for h in hist]
    by_ops = [i for i, h in enumerate(hist) if h["actor"] == "operator:ops-1"]
    approved = next(i for i in by_ops if hist[i]["kind"] == "transition")
    first_create = next(i for i, h in enumerate(hist) if h["kind"] == "exchange")
    assert kinds[0] == ("transition", "awaiting_approval") and approved < first_create
    assert "checked the report scope" in hist[approved]["cause"]
    assert hist[approved]["data"]["data"]["reason"] == "checked the report scope"
    audit = audit_rows(gateway, op_id)
    decision = [a for a in audit if a["kind"] == "operator_decision"]
    assert len(decision) == 1 and decision[0]["actor"] == "operator:ops-1"
    assert "checked the report scope" in str(decision[0]["payload"])

    metrics = (await gateway.http.get("/metrics")).text
    assert 'jobgate_policy_approvals_total{decision="approved",rule="gated"}' in metrics


async def test_deny_ends_it_failed_and_nothing_is_ever_sent(gateway: Gateway, k: Keys) -> None:
    op_id = (await _gated(gateway, k.agent))["operation_id"]
    token = await gateway.token_of(op_id)
    r = await _decide(gateway, op_id, k.operator, "deny", "not this quarter")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["done"] is True and body["status"] == "failed" and body["outcome"] == "failed"
    assert body["error"]["code"] == "approval_denied"
    assert "not this quarter" in body["error"]["message"] and "ops-1" in body["error"]["message"]
    assert "without starting" in body["message"]
    await gateway.tick(APPROVAL_SECONDS * 2)
    assert gateway.stats(token)["creates_by_token"].get(token, 0) == 0
    assert not gateway.jobs_for(op_id)
    # Decided once: a second decision is refused with where it stands.
    again = await _decide(gateway, op_id, k.other_operator, "approve", "too late")
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_awaiting_approval"
    assert again.json()["operation"]["state"] == "failed"
    hist = await _history(gateway, op_id, k.operator)
    denial = [h for h in hist if h["actor"] == "operator:ops-1"]
    assert len(denial) == 1 and "not this quarter" in denial[0]["cause"]
    assert denial[0]["to_state"] == "failed"
    audit = [a for a in audit_rows(gateway, op_id) if a["kind"] == "operator_decision"]
    assert len(audit) == 1 and "not this quarter" in str(audit[0]["payload"])


async def test_an_operator_cannot_decide_on_its_own_create(gateway: Gateway, k: Keys) -> None:
    op_id = (await _gated(gateway, k.operator))["operation_id"]
    r = await _decide(gateway, op_id, k.operator, "approve", "mine anyway")
    assert r.status_code == 403 and r.json()["error"]["code"] == "own_operation"
    assert r.json()["operation"]["state"] == "awaiting_approval"
    r = await _decide(gateway, op_id, k.other_operator, "approve", "second pair of eyes")
    assert r.status_code == 200 and r.json()["state"] == "create_pending"


async def test_an_approval_nobody_gives_expires_unsent(gateway: Gateway, k: Keys) -> None:
    op_id = (await _gated(gateway, k.agent))["operation_id"]
    token = await gateway.token_of(op_id)
    await gateway.tick(APPROVAL_SECONDS - 10)
    r = await gateway.http.get(f"/v1/operations/{op_id}", headers=auth(k.agent))
    assert r.json()["state"] == "awaiting_approval"
    await gateway.tick(20)
    body = (await gateway.http.get(f"/v1/operations/{op_id}", headers=auth(k.agent))).json()
    assert body["done"] and body["status"] == "failed"
    assert body["error"]["code"] == "approval_expired" and "EXPIRED" in body["message"]
    assert gateway.stats(token)["creates_by_token"].get(token, 0) == 0


async def test_a_create_cancelled_while_held_ends_cancelled_unsent(
    gateway: Gateway, k: Keys
) -> None:
    op_id = (await _gated(gateway, k.agent))["operation_id"]
    token = await gateway.token_of(op_id)
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", headers=auth(k.agent))
    assert r.status_code == 202
    await gateway.tick()
    body = (await gateway.http.get(f"/v1/operations/{op_id}", headers=auth(k.agent))).json()
    assert body["done"] and body["status"] == "cancelled"
    assert "before anything was sent" in body["message"]
    assert gateway.stats(token)["creates_by_token"].get(token, 0) == 0


async def test_the_operations_page_offers_approval_and_records_it(
    gateway: Gateway, k: Keys
) -> None:
    op_id = (await _gated(gateway, k.agent))["operation_id"]
    page = await gateway.http.get(f"/operations/{op_id}", headers=auth(k.operator))
    assert page.status_code == 200 and f'action="/operations/{op_id}/approval"' in page.text
    assert "held for approval" in page.text
    form_headers = {"Origin": "http://127.0.0.1", **auth(k.operator)}
    blank = await gateway.http.post(
        f"/operations/{op_id}/approval", data={"decision": "deny"}, headers=form_headers
    )
    assert blank.status_code == 422 and "give a reason" in blank.text
    r = await gateway.http.post(
        f"/operations/{op_id}/approval",
        data={"decision": "deny", "reason": "budget is for Q3"},
        headers=form_headers,
    )
    assert r.status_code == 303 and r.headers["location"].endswith("?done=deny")
    body = (await gateway.http.get(f"/v1/operations/{op_id}", headers=auth(k.agent))).json()
    assert body["state"] == "failed" and "budget is for Q3" in body["error"]["message"]
    page = await gateway.http.get(f"/operations/{op_id}", headers=auth(k.operator))
    assert "awaiting_approval → <b>failed</b>" in page.text and "operator:ops-1" in page.text
    assert f'action="/operations/{op_id}/approval"' not in page.text


async def test_jobgate_ops_approve_and_deny_on_the_database(
    gateway: Gateway, k: Keys, capsys: pytest.CaptureFixture[str]
) -> None:
    # The CLI runs on the system clock: bring the gateway's to the same time.
    gateway.clock.advance((datetime.now(UTC) - gateway.clock.now()).total_seconds())
    approve_id = (await _gated(gateway, k.agent))["operation_id"]
    deny_id = (await _gated(gateway, k.agent))["operation_id"]
    url = gateway.ctx.settings.database_url

    code, out, _ = await cli(
        capsys, "deny", deny_id, "--reason", "duplicate", "--database-url", url
    )
    assert code == 0 and f"{deny_id}: denied; now failed (failed)" in out
    code, out, _ = await cli(
        capsys, "approve", approve_id, "--reason", "fine", "--database-url", url
    )
    assert code == 0 and "approved; now processing (create_pending)" in out
    final = await until_done(gateway, approve_id, k.agent)
    assert final["status"] == "succeeded"
    token = await gateway.token_of(approve_id)
    assert gateway.stats(token)["creates_by_token"][token] == 1
    hist = await _history(gateway, deny_id, k.operator)
    assert any(h["actor"] == f"operator:{CLI_ACTOR}" and "duplicate" in h["cause"] for h in hist)
    code, _, err = await cli(capsys, "deny", deny_id, "--reason", "again", "--database-url", url)
    assert code == 2 and "409 not_awaiting_approval" in err


async def test_concurrent_creates_cannot_both_take_the_last_place(
    gateway: Gateway, k: Keys
) -> None:
    """Racing creates of one key all end within the limit (on SQLite each create's write
    transaction begins IMMEDIATE, on PostgreSQL the policy takes a per-key lock)."""
    assert (await create(gateway, k.agent, "capped")).status_code == 202
    answers = await asyncio.gather(*(create(gateway, k.agent, "capped") for _ in range(6)))
    codes = sorted(r.status_code for r in answers)
    assert codes == [202] + [429] * 5, [r.text for r in answers]
    assert await operation_count(gateway, k.operator) == 2


@pytest.mark.postgres_only
async def test_the_policy_decides_one_keys_creates_one_at_a_time(gateway: Gateway) -> None:
    """The per-key lock is taken by the policy check itself and held until its transaction
    ends: a second transaction cannot take it meanwhile (another key's can)."""
    policy = gateway.ctx.policy
    subject = Subject("agent-1", "agent", "mock", "report", {"lane": "capped"})
    try_lock = text("SELECT pg_try_advisory_xact_lock(hashtext(:k))")
    async with gateway.ctx.db.transaction() as first:
        await admission.admit(first, policy, subject, {}, gateway.clock.now())
        async with gateway.ctx.db.transaction() as second:
            assert (await second.execute(try_lock, {"k": "agent-1"})).scalar_one() is False
            assert (await second.execute(try_lock, {"k": "agent-2"})).scalar_one() is True
    async with gateway.ctx.db.transaction() as after:
        assert (await after.execute(try_lock, {"k": "agent-1"})).scalar_one() is True


async def test_an_approved_create_is_announced_once_and_never_sent_blind_again(
    gateway: Gateway, k: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The step that announced the approved create fails before the provider answers (it
    may have been sent): the next step treats it as possibly sent and reconciles with the
    stored token; it never mints the approved permit twice."""
    op_id = (await _gated(gateway, k.agent))["operation_id"]
    token = await gateway.token_of(op_id)
    real_send = create_steps.send_create
    calls = []

    async def dies_once(*args: Any, **kw: Any) -> Any:
        calls.append(args[-1].reason)
        if len(calls) == 1:
            raise RuntimeError("the process died while the create was in flight")
        return await real_send(*args, **kw)

    monkeypatch.setattr(create_steps, "send_create", dies_once)
    r = await _decide(gateway, op_id, k.operator, "approve", "go")
    assert r.status_code == 200
    final = await until_done(gateway, op_id, k.agent)
    assert final["status"] == "succeeded"
    hist = await _history(gateway, op_id, k.operator)
    assert sum(h["kind"] == APPROVED_SEND_ROW for h in hist) == 1
    assert "create_unknown" in [h["to_state"] for h in hist if h["kind"] == "transition"]
    [doubt] = [h["cause"] for h in hist if h["to_state"] == "create_unknown"]
    assert "sending the approved create (its first send) died" in doubt, doubt
    assert "again" not in doubt  # nothing was sent before it: it was the first send
    assert calls == ["approved"]  # the approved permit was used once, then reconciliation
    assert len(gateway.jobs_for(op_id)) == 1
    assert gateway.stats(token)["creates_by_token"][token] == 1  # its token replay
