"""docs/policy.md's examples are policies the gateway accepts, and its `policy check`
output is what the command prints (app/policy)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from app.policy.check import run
from app.policy.loader import PolicyError, parse
from app.policy.rules import Subject, matches
from app.providers.language.loader import load_profiles

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "policy.md"
DOC = DOC_PATH.read_text()
PROFILES = load_profiles(None, {})


def _block(marker: str, lang: str = "yaml") -> str:
    found = re.search(rf"<!-- {marker} -->\n```{lang}\n(.*?)```", DOC, re.S)
    assert found, f"docs/policy.md has no {marker} block"
    return found.group(1)


def test_the_docs_first_example_loads_as_written_and_selects_its_lanes() -> None:
    policy = parse(DOC_PATH, yaml.safe_load(_block("policy-example")), PROFILES)
    capped, gated = policy.rules
    assert capped.max_in_flight == 2 and gated.approval == "always"
    lane = Subject("agent-1", "agent", "mock", "report", {"lane": "capped"})
    assert matches(capped, lane) and not matches(gated, lane)
    assert not matches(capped, Subject("agent-1", "agent", "mock", "report", {}))


def test_the_worked_example_prints_what_the_doc_shows(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(_block("policy-worked-example"))
    code, text = run(path, PROFILES)
    assert code == 0, text
    shown = re.search(r"prints what each rule matches:\n\n```\n(.*?)```", DOC, re.S)
    assert shown and shown.group(1).strip() == text.strip()


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ({"version": 2, "rules": []}, "version: must be 1"),
        ({"version": 1, "rules": [{"provider": "mock"}]}, "rules.0: sets nothing"),
        ({"version": 1, "rules": [{"max_in_flight": -1}]}, "rules.0.max_in_flight"),
        ({"version": 1, "rules": [{"approval": "sometimes"}]}, "rules.0.approval: must be"),
        ({"version": 1, "rules": [{"provider": "opneai", "max_in_flight": 1}]}, "opneai"),
        ({"version": 1, "rules": [{"kind": "poem", "max_in_flight": 1}]}, "no provider has"),
        ({"version": 1, "rules": [{"max_in_flight": 1, "colour": "red"}]}, "rules.0.colour"),
        (
            {"version": 1, "rules": [{"cost": {"per_item": {"pointer": "items", "units": 1}}}]},
            "rules.0.cost.per_item.pointer",
        ),
        (
            {"version": 1, "rules": [{"name": "a", "max_in_flight": 1}] * 2},
            "rule names must be unique",
        ),
    ],
)
def test_a_bad_file_names_each_problem_on_its_own_line(bad: object, says: str) -> None:
    with pytest.raises(PolicyError) as caught:
        parse(Path("p.yaml"), bad, PROFILES)
    assert any(says in line and line.startswith("p.yaml: ") for line in caught.value.problems)
    assert str(caught.value).count("\n") == len(caught.value.problems) - 1


def test_every_problem_is_reported_at_once() -> None:
    bad = {"version": 3, "rules": [{"max_in_flight": -1}, {"provider": "mock"}]}
    with pytest.raises(PolicyError) as caught:
        parse(Path("p.yaml"), bad, PROFILES)
    assert len(caught.value.problems) == 3


def test_one_rule_is_counted_as_one_rule(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("version: 1\nrules:\n  - name: one\n    max_in_flight: 1\n")
    code, text = run(path, PROFILES)
    assert code == 0 and text.splitlines()[0] == "policy version 1: 1 rule"
