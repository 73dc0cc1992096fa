"""Pure evaluation of state rules: (answer, counts) -> (provider word, remote class)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.providers.answers.values import as_str
from app.providers.expressions import pointers
from app.providers.expressions.pointers import MISSING
from app.providers.language.counts import Counts, as_count, evaluate
from app.providers.language.spec_states import Condition, StateRule
from app.providers.language.words import RemoteClass


def _same(a: Any, b: Any) -> bool:
    # JSON equality: true is not 1, and 1 is 1.0.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    return bool(a == b)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    counted = as_count(value)
    return None if counted is None else float(counted)


def _compare(cond: Condition, value: Any) -> bool:
    if cond.equals is not None and not _same(value, cond.equals):
        return False
    if cond.one_of is not None and not any(_same(value, v) for v in cond.one_of):
        return False
    bounds = [(cond.gt, float.__gt__), (cond.ge, float.__ge__)]
    bounds += [(cond.lt, float.__lt__), (cond.le, float.__le__)]
    for limit, op in bounds:
        if limit is None:
            continue
        number = _number(value)
        if number is None or not op(number, float(limit)):
            return False
    return True


def holds(cond: Condition, body: Any, counts: Counts | None) -> bool:
    """Whether one condition holds; a value that cannot be read never matches."""
    if cond.count is not None:
        have = counts or Counts()
        value = evaluate(cond.count, have.value, names=True)
        return value is not None and _compare(cond, value)
    found = pointers.get(body, cond.pointer)
    present = found is not MISSING and found is not None
    if cond.present is not None and present is not cond.present:
        return False
    if cond.present is False:
        return True
    return present and _compare(cond, found)


def classify(
    body: Any,
    *,
    state: str | None,
    states: Mapping[str, RemoteClass],
    rules: Sequence[StateRule],
    counts: Counts | None,
) -> tuple[str | None, RemoteClass | None]:
    """The provider's word (at the ``state`` pointer) and its remote class.

    Rules first (first match wins), then the word's mapping; an unknown word is
    RUNNING. ``(word, None)`` only when there is neither a rule match nor a word.
    """
    word = as_str(pointers.get(body, state)) if state else None
    for rule in rules:
        if all(holds(c, body, counts) for c in rule.when):
            return word, rule.then
    if word is None:
        return None, None
    return word, states.get(word, RemoteClass.RUNNING)
