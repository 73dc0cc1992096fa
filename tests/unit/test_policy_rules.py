"""The policy's pure parts: what a rule selects, what a create costs, and a bad file
stopping `serve` before anything starts (app/policy, docs/policy.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from app.policy.cost import create_cost, items_at
from app.policy.rules import Policy, Rule, Subject, matches, same_scope

AGENT = Subject("agent-1", "agent", "mock", "report", {"lane": "a", "team": "x"})


def test_every_named_selector_must_match_and_a_missing_one_matches_anything() -> None:
    assert matches(Rule(max_in_flight=1), AGENT)
    assert matches(Rule(role="agent", labels={"lane": "a"}, max_in_flight=1), AGENT)
    assert not matches(Rule(role="operator", max_in_flight=1), AGENT)
    assert not matches(Rule(key="agent-2", max_in_flight=1), AGENT)
    assert not matches(Rule(labels={"lane": "a", "team": "y"}, max_in_flight=1), AGENT)
    assert not matches(Rule(kind="other", max_in_flight=1), AGENT)


def test_an_existing_operation_counts_by_what_it_is_not_by_who_made_it() -> None:
    rule = Rule(key="agent-1", role="agent", provider="mock", labels={"lane": "a"}, max_in_flight=1)
    assert same_scope(rule, "mock", "report", {"lane": "a"})
    assert not same_scope(rule, "mock", "report", {"lane": "b"})
    assert not same_scope(rule, "mock", "report", None)


@pytest.mark.parametrize(
    ("input_", "count"),
    [
        ({"items": [1, 2, 3]}, 3),
        ({"items": 7}, 7),
        ({"items": True}, 0),  # a flag is not a count
        ({"items": -2}, 0),
        ({"items": "many"}, 0),
        ({}, 0),
    ],
)
def test_items_are_an_arrays_length_or_a_whole_number(input_: object, count: int) -> None:
    assert items_at(input_, "/items") == count


def test_the_first_matching_rule_with_a_cost_prices_the_create() -> None:
    policy = Policy.model_validate(
        {
            "version": 1,
            "rules": [
                {"labels": {"lane": "z"}, "cost": {"per_create": 100}},
                {"max_in_flight": 5},
                {"cost": {"per_create": 1, "per_item": {"pointer": "/items", "units": 0.5}}},
                {"cost": {"per_create": 50}},
            ],
        }
    )
    assert create_cost(policy, AGENT, {"items": [1, 2, 3, 4]}) == 3.0
    assert create_cost(Policy(version=1), AGENT, {"items": [1]}) == 0.0


def test_a_bad_policy_file_stops_serve_with_one_line_per_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "policy.yaml"
    bad.write_text("version: 1\nrules:\n  - provider: mock\n  - max_in_flight: -1\n")
    monkeypatch.setenv("JOBGATE_POLICY_FILE", str(bad))
    monkeypatch.setenv("JOBGATE_DATA_DIR", str(tmp_path / "data"))
    assert main(["serve", "--port", "1"]) == 2  # refused before any port or database
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        f"jobgate: {bad}: rules.0: sets nothing: give max_in_flight, creates_per_minute, "
        "budget, cost or approval",
        f"jobgate: {bad}: rules.1.max_in_flight: input should be greater than or equal to 0",
    ]
    assert not (tmp_path / "data").exists()
