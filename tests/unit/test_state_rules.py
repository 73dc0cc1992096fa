"""State rules and item counts: first matching rule wins; unknown is running, never success."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from app.providers.answers.state_rules import classify, holds
from app.providers.expressions import pointers
from app.providers.language import counts as counting
from app.providers.language.counts import CountError, Counts, CountsSpec, evaluate, parse
from app.providers.language.loader import load_profiles
from app.providers.language.spec_states import Condition, StateRule
from app.providers.language.words import RemoteClass as C

PROFILES = load_profiles(None, {})


def remote(name: str, body: Any) -> tuple[str | None, C | None]:
    profile = PROFILES[name]
    found = counting.read(profile.counts, body)
    return classify(
        body,
        state=profile.pointers.state,
        states=profile.states,
        rules=profile.state_rules,
        counts=found,
    )


def anthropic(status: str, **counts: int) -> dict[str, Any]:
    zero = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    return {"processing_status": status, "request_counts": {**zero, **counts}}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (anthropic("in_progress", processing=5), C.RUNNING),
        (anthropic("canceling", processing=5), C.RUNNING),
        (anthropic("ended", succeeded=5), C.SUCCEEDED),
        (anthropic("ended", succeeded=4, errored=1), C.SUCCEEDED_PARTIAL),
        (anthropic("ended", succeeded=4, expired=1), C.SUCCEEDED_PARTIAL),
        (anthropic("ended", errored=5), C.FAILED),
        (anthropic("ended", expired=5), C.FAILED),
        (anthropic("ended", succeeded=2, canceled=3), C.CANCELLED),
        (anthropic("archived_in_2030"), C.RUNNING),  # an unknown word: never success
    ],
)
def test_anthropic_ended_means_what_the_counts_say(body: dict[str, Any], expected: C) -> None:
    assert remote("anthropic_message_batches", body)[1] is expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"name": "op", "metadata": {"state": "RUNNING"}}, C.RUNNING),
        ({"name": "op"}, C.RUNNING),  # no done, no state: still running
        ({"name": "op", "done": False}, C.RUNNING),
        ({"name": "op", "done": True, "error": {"code": 1}}, C.CANCELLED),
        ({"name": "op", "done": True, "error": {"code": 3, "message": "x"}}, C.FAILED),
        ({"name": "op", "done": True, "response": {}}, C.SUCCEEDED),
        ({"done": True, "response": {}, "metadata": {"failedCharacters": "10"}},
         C.SUCCEEDED_PARTIAL),
        ({"done": 1, "response": {}}, None),  # done must be true: unreadable, never success
    ],
)  # fmt: skip
def test_aip151_done_error_response(body: dict[str, Any], expected: C | None) -> None:
    assert remote("google_translate", body)[1] is expected


@pytest.mark.parametrize(
    ("status", "counts", "expected"),
    [
        ("completed", {"total": 3, "completed": 3, "failed": 0}, C.SUCCEEDED),
        ("completed", {"total": 3, "completed": 2, "failed": 1}, C.SUCCEEDED_PARTIAL),
        ("completed", {"total": 3, "completed": 0, "failed": 3}, C.FAILED),
        ("expired", {"total": 100, "completed": 60, "failed": 0}, C.SUCCEEDED_PARTIAL),
        ("expired", {"total": 100, "completed": 0, "failed": 0}, C.FAILED),
        ("cancelled", {"total": 100, "completed": 60, "failed": 0}, C.CANCELLED),
        ("finalizing", {"total": 3, "completed": 3, "failed": 0}, C.RUNNING),
    ],
)
def test_openai_expired_is_never_success(status: str, counts: dict[str, int], expected: C) -> None:
    assert remote("openai_batch", {"status": status, "request_counts": counts}) == (
        status,
        expected,
    )


def test_the_provider_word_is_kept_beside_the_class() -> None:
    assert remote("azure_operation_location", {"status": "partiallyCompleted"}) == (
        "partiallyCompleted",
        C.SUCCEEDED_PARTIAL,
    )
    assert remote("mock", {"nothing": 1}) == (None, None)


def test_conditions() -> None:
    body = {"a": True, "n": "12", "s": "x", "z": None}
    assert holds(Condition(pointer="/a", equals=True), body, None)
    assert not holds(Condition(pointer="/n", equals=12), body, None)  # "12" is not 12
    assert holds(Condition(pointer="/n", gt=11), body, None)  # but counts as a number
    assert holds(Condition(pointer="/s", one_of=["y", "x"]), body, None)
    assert holds(Condition(pointer="/z", present=False), body, None)
    assert holds(Condition(pointer="/nope", present=False), body, None)
    assert not holds(Condition(pointer="/nope", equals="x"), body, None)
    assert holds(Condition(count="total - succeeded", equals=2), {}, Counts(5, 3))
    assert not holds(Condition(count="failed", equals=0), {}, Counts(5, 3))  # unknown count


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"pointer": "/a"}, "give a test"),
        ({"pointer": "/a", "count": "total", "equals": 1}, "exactly one of pointer or count"),
        ({"count": "total", "present": True}, "a count takes"),
        ({"count": "totl", "equals": 1}, "unknown count 'totl'"),
    ],
)
def test_bad_conditions_are_refused(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Condition.model_validate(data)


def test_a_rule_takes_one_condition_or_a_list() -> None:
    one = StateRule.model_validate({"when": {"pointer": "/a", "equals": 1}, "then": "failed"})
    assert len(one.when) == 1 and one.then is C.FAILED


def test_count_expressions() -> None:
    body = {"c": {"t": 10, "ok": "7", "bad": 2.0}}

    def resolve(pointer: str) -> int | None:
        return counting.as_count(pointers.get(body, pointer))

    assert evaluate("/c/t - /c/ok - /c/bad", resolve) == 1
    assert evaluate("/c/t + 5", resolve) == 15
    assert evaluate("/c/none + 1", resolve) is None
    assert parse("total - succeeded", names=True) == [(1, "total"), (-1, "succeeded")]
    for bad in ("/a -", "/a * /b", "a + /b", "/a~2"):
        with pytest.raises(CountError):
            parse(bad)


def test_missing_counts_are_zero_only_when_the_profile_says_so() -> None:
    spec = CountsSpec(total="/t", succeeded="/s", failed="/f")
    assert counting.read(spec, {"t": 4, "s": 4}) == Counts(total=4, succeeded=4)
    zero = spec.model_copy(update={"missing_is_zero": True})
    assert counting.read(zero, {"t": "4", "s": "4"}) == Counts(total=4, succeeded=4, failed=0)
    assert counting.read(spec, {}) is None
    with pytest.raises(ValidationError, match="at least one count"):
        CountsSpec()


def test_items_count_what_never_ran_apart_from_what_failed() -> None:
    expired = Counts(total=100, succeeded=60, failed=2, not_processed=38)
    assert expired.as_items() == {
        "succeeded": 60,
        "failed": 2,
        "not_processed": 38,
        "processed": 100,
    }
    # Items of the total no count accounts for were never shown to have run.
    unaccounted = Counts(total=10, succeeded=7)
    assert unaccounted.as_items() == {"succeeded": 7, "not_processed": 3, "processed": 10}
    assert Counts().as_items() is None
