"""`jobgate policy check FILE`: check a policy file and say what each rule matches."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from app.policy.loader import PolicyError, load_policy
from app.policy.rules import Policy, Rule
from app.providers.language.profile import Profile


def selects(rule: Rule) -> str:
    """The rule's selectors in words."""
    parts = [
        f"{name} {value}"
        for name, value in (
            ("key", rule.key),
            ("key one of", ", ".join(rule.keys) if rule.keys else None),
            ("role", rule.role.value if rule.role else None),
            ("provider", rule.provider),
            ("kind", rule.kind),
        )
        if value is not None
    ]
    parts += [f"label {k}={v}" for k, v in sorted(rule.labels.items())]
    return ", ".join(parts) or "every create"


def sets(rule: Rule) -> str:
    """What the rule sets, in words."""
    out = []
    if rule.max_in_flight is not None:
        out.append(f"at most {rule.max_in_flight} in flight per key")
    if rule.creates_per_minute is not None:
        out.append(f"at most {rule.creates_per_minute} creates per minute per key")
    if rule.budget is not None:
        out.append(f"a budget of {rule.budget.per_day:g} cost units per key per UTC day")
    if rule.cost is not None:
        item = rule.cost.per_item
        each = f" + {item.units:g} per item at {item.pointer}" if item else ""
        out.append(f"cost {rule.cost.per_create:g} per create{each}")
    if rule.approval == "always":
        out.append("approval always")
    elif rule.approval is not None:
        out.append(f"approval above cost {rule.approval.above_cost:g}")
    return "; ".join(out)


def targets(rule: Rule, profiles: Mapping[str, Profile]) -> str:
    """The provider kinds the rule can select."""
    found = [
        f"{name}/{kind}"
        for name, p in sorted(profiles.items())
        if rule.provider in (None, name)
        for kind in sorted(p.kinds)
        if rule.kind in (None, kind)
    ]
    return ", ".join(found) or "nothing"


def describe(policy: Policy, profiles: Mapping[str, Profile]) -> str:
    count = len(policy.rules)
    lines = [f"policy version {policy.version}: {count} rule{'' if count == 1 else 's'}"]
    for name, rule in policy.named():
        lines.append(f"{name}: {selects(rule)} -> {sets(rule)}")
        lines.append(f"  matches {targets(rule, profiles)}")
    return "\n".join(lines)


def run(path: Path, profiles: Mapping[str, Profile]) -> tuple[int, str]:
    """(exit code, text): 0 and what each rule matches, or 2 and one line per problem."""
    try:
        policy = load_policy(path, profiles)
    except PolicyError as exc:
        return 2, "\n".join(exc.problems)
    assert policy is not None
    return 0, describe(policy, profiles)
