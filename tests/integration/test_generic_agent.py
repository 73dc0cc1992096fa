"""A generic keyword agent runs every mock scenario, over REST and over MCP.

Its rules (tests/support/generic_agent.py) were written from the contract's three
situations alone (docs/agent-api.md), not from jobgate's phrases. It starts one job,
then acts on the words only: waiting words -> make the call `next_action` names (the
MCP tool it names, over MCP); words of a human, a failure or a success -> stop and
report that. Every job must end in the right report, with no false success and no
message that leaves it stuck. The bundled providers' fakes, with their faults, are read
by the same rules in tests/integration/profiles (their `gateway` fixture).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from jobgate_fakes.mock.scenarios import SCENARIOS
from tests.support.agent_stack import LONG_DEADLINES, agent_env, call, gateway, mcp_session
from tests.support.generic_agent import CONFUSED, Tally, read

BUDGET = 20  # calls after the create before the agent reports "still running"
WAIT_S = 0.5  # how long one MCP wait may hold (an endless job costs seconds, not minutes)

# What each scenario is, in the contract's situations.
EXPECTED: dict[str, str] = {
    "fast": "success",
    "sync": "success",
    "slow": "success",
    "late_failure": "failure",
    "failed_partial": "failure",
    "never_finishes": "still running",
    "rate_limited": "success",
    "lost_create_response": "success",
    "accept_then_5xx": "success",
    "create_timeout": "needs_human",
    "reject": "failure",
    "different_job_id": "needs_human",  # with list_delay 1: the lookup misses job A
    "cancel_race": "success",  # nobody cancels it
    "cancel_ignored": "still running",
    "partial_results": "failure",  # completed_with_errors: not a success
    "corrupt_result": "needs_human",
    "result_unavailable": "success",  # the result comes on a later try
    "webhook_duplicate": "success",
}
ENDLESS = {"never_finishes", "cancel_ignored"}
PARAMS: dict[str, dict[str, int]] = {"different_job_id": {"list_delay": 1}}


def test_every_mock_scenario_has_an_expected_report() -> None:
    assert set(EXPECTED) == set(SCENARIOS)


def create_of(scenario: str) -> dict[str, Any]:
    create: dict[str, Any] = {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": {"name": scenario, **PARAMS.get(scenario, {})}},
    }
    if scenario in ENDLESS:
        create["deadlines"] = LONG_DEADLINES
    return create


def conclude(tally: Tally, body: dict[str, Any], calls: int) -> str | None:
    """The agent's report from this body's words, or None to go on waiting."""
    tally.check(body, "body")
    said = read(str(body["message"]))
    if said == "waiting":
        return "still running" if calls >= BUDGET else None
    return said


@pytest.fixture(scope="module")
def gateway_url(
    module_database_url: str, mock_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("generic-agent")
    env = agent_env(module_database_url, mock_url, tmp, wait_default_seconds=WAIT_S)
    with gateway(env, tmp / "gw.log") as url:
        yield url


def run_rest(http: httpx2.Client, scenario: str, tally: Tally) -> str:
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    body = http.post("/v1/operations", json=create_of(scenario), headers=headers).json()
    for calls in range(BUDGET + 1):
        report = conclude(tally, body, calls)
        if report is not None:
            return report
        method, path = body["next_action"]["call"].split(" ", 1)
        body = http.request(method, path).json()
    return CONFUSED


async def run_mcp(url: str, scenario: str, tally: Tally) -> str:
    async with mcp_session(url) as client:
        args = {**create_of(scenario), "idempotency_key": uuid.uuid4().hex}
        result = await call(client, "start_operation", **args)
        for calls in range(BUDGET + 1):
            body = dict(result.structured_content or {})
            body["message"] = "\n".join(getattr(c, "text", "") for c in result.content)
            report = conclude(tally, body, calls)
            if report is not None:
                return report
            tool = body["next_action"]["tool"]
            result = await call(
                client, tool, operation_id=body["operation_id"], timeout_seconds=WAIT_S
            )
    return CONFUSED


@pytest.mark.parametrize("scenario", sorted(EXPECTED), ids=lambda s: f"scenario_{s}")
def test_rest_words_alone_lead_to_the_right_report(gateway_url: str, scenario: str) -> None:
    tally = Tally()
    with httpx2.Client(base_url=gateway_url, timeout=30) as http:
        report = run_rest(http, scenario, tally)
    assert report == EXPECTED[scenario], tally.misses
    assert tally.false_successes == 0 and tally.stuck == 0 and not tally.misses, tally.misses


@pytest.mark.parametrize("scenario", sorted(EXPECTED), ids=lambda s: f"scenario_{s}")
async def test_mcp_words_alone_lead_to_the_right_report(gateway_url: str, scenario: str) -> None:
    tally = Tally()
    report = await run_mcp(gateway_url, scenario, tally)
    assert report == EXPECTED[scenario], tally.misses
    assert tally.false_successes == 0 and tally.stuck == 0 and not tally.misses, tally.misses


def test_the_rules_are_not_fooled_by_mixed_words() -> None:
    """The rules can fail: a message with words of two situations leaves the agent stuck,
    and one that says success while the job is not done is a false success."""
    tally = Tally()
    tally.check({"done": False, "message": "Still running; a human will review it"})
    tally.check({"done": False, "message": "The job may still complete successfully"})
    tally.check({"done": True, "outcome": "failed", "message": "It failed. Report the failure"})
    assert tally.stuck == 1 and tally.false_successes == 1 and len(tally.misses) == 2
