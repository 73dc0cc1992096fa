"""What a create costs under the policy: the first matching rule with a `cost` decides."""

from __future__ import annotations

from typing import Any

from app.policy.rules import Cost, Policy, Subject, matches
from app.providers.expressions import pointers


def items_at(input_: Any, pointer: str) -> int:
    """The number of items at `pointer`: an array's length, a whole number's value, else 0."""
    found = pointers.get(input_, pointer)
    if isinstance(found, list):
        return len(found)
    if isinstance(found, int) and not isinstance(found, bool) and found > 0:
        return found
    return 0


def of_create(cost: Cost, input_: Any) -> float:
    units = cost.per_create
    if cost.per_item is not None:
        units += cost.per_item.units * items_at(input_, cost.per_item.pointer)
    return float(units)


def create_cost(policy: Policy, s: Subject, input_: Any) -> float:
    """The cost units of this create (0 when no matching rule names a cost)."""
    for rule in policy.rules:
        if rule.cost is not None and matches(rule, s):
            return of_create(rule.cost, input_)
    return 0.0
