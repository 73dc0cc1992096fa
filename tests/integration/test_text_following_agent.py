"""A strict reader: an agent that knows nothing of the API but how to start an operation.

It POSTs one create, then acts only on the `message` and `next_action` of each body:
it makes exactly the call `next_action` names, and decides from the words of the
message alone (docs/agent-api.md, "Three situations"). It ends with one report:
succeeded, partial (with the failed items), failed, needs a human, or still running
(with the operation id read from the words). Every mock scenario must end in the
right report, and no body may make it report success before the result was checked.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest

from jobgate_fakes.mock.scenarios import SCENARIOS
from tests.support.agent_stack import LONG_DEADLINES, agent_env, gateway

BUDGET = 20  # calls the agent makes after the create before it reports "still running"

# What an agent developer reads in docs/agent-api.md, and nothing else.
IN_PROGRESS = "is IN PROGRESS"
NEEDS_HUMAN = "NEEDS A HUMAN"
FINISHED = "has FINISHED"
PARTIAL = "a PARTIAL result"
SUCCESS = "You may report success"
FAILURE = "Report the failure"
OPERATION_ID = re.compile(r"\boperation (op_[0-9A-Za-z]+)")


@dataclass
class Report:
    word: str  # succeeded | partial | failed | needs a human | still running
    operation_id: str | None = None
    failed_items: list[Any] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)


class TextFollowingAgent:
    def __init__(self, http: httpx2.Client) -> None:
        self.http = http

    def follow(self, action: dict[str, Any] | None) -> Any:
        """Make exactly the call `next_action` names (method and path, as written)."""
        assert action is not None, "the words said to go on, but no call was named"
        method, path = action["call"].split(" ", 1)
        return self.http.request(method, path).json()

    def run(self, create: dict[str, Any]) -> Report:
        key = uuid.uuid4().hex
        body = self.http.post("/v1/operations", json=create, headers={"Idempotency-Key": key})
        report = Report("confused")
        current = body.json()
        for _ in range(BUDGET + 1):
            report.bodies.append(current)
            message = current["message"]
            if NEEDS_HUMAN in message:
                report.word = "needs a human"
                return report
            if FINISHED in message:
                if PARTIAL in message:
                    page = self.follow(current["next_action"])
                    report.word, report.failed_items = "partial", page["items"]
                elif SUCCESS in message:
                    self.follow(current["next_action"])  # read the result it names
                    report.word = "succeeded"
                elif FAILURE in message:
                    report.word = "failed"
                return report
            if IN_PROGRESS in message:
                found = OPERATION_ID.search(message)
                report.operation_id = found.group(1) if found else None
                if len(report.bodies) > BUDGET:
                    report.word = "still running"
                    return report
                current = self.follow(current["next_action"])
                continue
            return report  # words it does not know: "confused"
        return report


EXPECTED: dict[str, str] = {
    "fast": "succeeded",
    "sync": "succeeded",
    "slow": "succeeded",
    "late_failure": "failed",
    "failed_partial": "failed",  # its kept partial output is named, never as a success
    "never_finishes": "still running",
    "rate_limited": "succeeded",
    "lost_create_response": "succeeded",
    "accept_then_5xx": "succeeded",
    "create_timeout": "needs a human",
    "reject": "failed",
    "different_job_id": "needs a human",  # with list_delay 1: the lookup misses job A
    "cancel_race": "succeeded",  # nobody cancels it
    "cancel_ignored": "still running",
    "partial_results": "partial",
    "corrupt_result": "needs a human",
    "result_unavailable": "succeeded",  # the result comes on a later try
    "webhook_duplicate": "succeeded",
}
ENDLESS = {"never_finishes", "cancel_ignored"}
PARAMS: dict[str, dict[str, int]] = {"different_job_id": {"list_delay": 1}}


def test_every_mock_scenario_has_an_expected_report() -> None:
    assert set(EXPECTED) == set(SCENARIOS)


@pytest.fixture(scope="module")
def agent(
    module_database_url: str, mock_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TextFollowingAgent]:
    tmp = tmp_path_factory.mktemp("text-agent")
    # A wait named without a timeout holds 0.5 s here: an endless job costs the agent
    # its budget in seconds, not minutes.
    env = agent_env(module_database_url, mock_url, tmp, wait_default_seconds=0.5)
    with gateway(env, tmp / "gw.log") as url, httpx2.Client(base_url=url, timeout=30) as http:
        yield TextFollowingAgent(http)


@pytest.mark.parametrize("scenario", sorted(EXPECTED), ids=lambda s: f"scenario_{s}")
def test_the_words_alone_lead_to_the_right_report(agent: TextFollowingAgent, scenario: str) -> None:
    create: dict[str, Any] = {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": {"name": scenario, **PARAMS.get(scenario, {})}},
    }
    if scenario in ENDLESS:
        create["deadlines"] = LONG_DEADLINES
    report = agent.run(create)
    assert report.word == EXPECTED[scenario], [b["message"] for b in report.bodies]
    first = report.bodies[0]
    if report.word == "still running":
        assert report.operation_id == first["operation_id"]
    if report.word == "partial":
        assert len(report.failed_items) == 5  # the scenario's default
    # No body told it to report success before the result was collected and checked.
    for body in report.bodies:
        if SUCCESS in body["message"]:
            assert body["state"] == "succeeded" and body["done"] is True
    # And the words never contradicted `done`.
    for body in report.bodies:
        assert (IN_PROGRESS in body["message"]) == (not body["done"]), body["message"]
