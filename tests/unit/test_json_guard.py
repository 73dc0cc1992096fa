"""The intake validator: strict parsing, the rules, the pointers, and degrading old text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.http import json_guard
from app.core.http.json_guard import MAX_DEPTH, MAX_SAFE_INTEGER, InvalidValue, MalformedJson
from app.core.text import degrade


def _reason(value: Any) -> tuple[str, str]:
    with pytest.raises(InvalidValue) as info:
        json_guard.check(value)
    assert info.value.status == 422 and info.value.code == "invalid_value"
    return info.value.details["reason"], info.value.details["pointer"]


@pytest.mark.parametrize(
    ("value", "reason", "pointer"),
    [
        ({"a": "x\x00y"}, "nul", "/a"),
        ({"a\x00": 1}, "nul", "/a\x00"),
        ({"labels": {"k": "\udfff"}}, "unpaired_surrogate", "/labels/k"),
        ({"\ud800": 1}, "unpaired_surrogate", "/\ufffd"),
        ({"n": MAX_SAFE_INTEGER + 1}, "number_out_of_range", "/n"),
        ({"n": -(MAX_SAFE_INTEGER + 1)}, "number_out_of_range", "/n"),
        ({"n": float("nan")}, "number_out_of_range", "/n"),
        ({"n": [1, 2, float("inf")]}, "number_out_of_range", "/n/2"),
        ({"a/b": {"c~d": "\x00"}}, "nul", "/a~1b/c~0d"),
    ],
)
def test_each_rule_names_the_pointer(value: Any, reason: str, pointer: str) -> None:
    assert _reason(value) == (reason, pointer)


def test_the_first_bad_value_in_document_order_is_reported() -> None:
    assert _reason({"a": [1, "\x00"], "b": "\x00"}) == ("nul", "/a/1")


def test_limits_of_i_json_and_depth_are_inclusive() -> None:
    json_guard.check({"n": MAX_SAFE_INTEGER, "m": -MAX_SAFE_INTEGER, "f": 1.5e308, "t": True})
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH):
        deep = [deep]
    json_guard.check(deep)  # 32 arrays around a leaf: allowed
    reason, pointer = _reason([deep])
    assert reason == "too_deep" and pointer == "/0" * MAX_DEPTH


def test_too_many_values() -> None:
    assert _reason(list(range(json_guard.MAX_VALUES)))[0] == "too_many_values"


def test_loads_keeps_out_of_range_numbers_for_check_to_point_at() -> None:
    for literal in ("1e400", "-1e400", "9" * 30, "-" + "9" * 5000, str(MAX_SAFE_INTEGER + 1)):
        value = json_guard.loads(f'{{"input": {{"x": [0, {literal}]}}}}')
        assert _reason(value) == ("number_out_of_range", "/input/x/1")
    assert json_guard.loads("[9007199254740991, 0.5]") == [MAX_SAFE_INTEGER, 0.5]


@pytest.mark.parametrize(
    "raw",
    [b"NaN", b'{"a": Infinity}', b"[-Infinity]", b"{nope", b"\xff\xfe\x00", b"[" * 5000],
)
def test_loads_refuses_what_is_not_json(raw: bytes) -> None:
    with pytest.raises(MalformedJson) as info:
        json_guard.loads(raw)
    assert info.value.status == 400 and info.value.code == "malformed_json"


def test_lone_surrogate_escapes_parse_and_are_then_refused() -> None:
    value = json_guard.loads(b'{"labels": {"k": "\\udfff"}}')
    assert _reason(value) == ("unpaired_surrogate", "/labels/k")
    # A proper pair is one character, and fine.
    json_guard.check(json_guard.loads(b'{"k": "\\ud83d\\ude00"}'))


def test_check_text_names_the_parameter() -> None:
    json_guard.check_text(None, parameter="provider")
    json_guard.check_text("mock", parameter="provider")
    with pytest.raises(InvalidValue) as info:
        json_guard.check_text("mo\x00ck", parameter="provider")
    assert info.value.details == {"reason": "nul", "parameter": "provider"}


def test_degrade_replaces_only_what_cannot_be_encoded() -> None:
    clean = {"a": ["x", 1, None, {"b": "é"}]}
    assert degrade(clean) is clean
    bad = {"labels": {"k\udfff": "v\ud800w"}, "n": 2**60}
    shown = degrade(bad)
    assert shown == {"labels": {"k\ufffd": "v\ufffdw"}, "n": 2**60}
    json.dumps(shown, ensure_ascii=False).encode("utf-8")  # encodes now
    assert degrade("a\udfffb") == "a\ufffdb"
