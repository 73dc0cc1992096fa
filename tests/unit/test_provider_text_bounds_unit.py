"""The bounds on provider text (app/providers/answers/bounds.py), on the shapes a hostile
provider can send: long text split inside a character, deep nesting, wide objects."""

from __future__ import annotations

import json

from app.providers.answers import bounds


def test_a_short_text_is_the_same_object() -> None:
    text = "the report failed"
    assert bounds.cut(text, bounds.MESSAGE_BYTES) is text


def test_a_long_text_is_cut_on_a_character_and_says_how_much_went() -> None:
    text = "é" * 5000  # 2 bytes each: the bound falls inside one
    out = bounds.cut(text, 4096)
    assert len(out.encode()) <= 4096
    head, _, mark = out.partition("\u2026 [cut: ")
    assert set(head) == {"é"}
    assert len(head.encode()) + int(mark.removesuffix(" bytes]")) == 10_000
    assert bounds.cut(out, 4096) == out  # cut once, never cut again


def test_deep_and_wide_values_are_bounded_and_marked() -> None:
    deep: object = "bottom"
    for _ in range(1000):
        deep = {"a": deep}
    out = bounds.bounded(deep)
    assert "nested deeper than" in json.dumps(out)
    wide = {f"k{i}": "x" * 1000 for i in range(10_000)}
    out = bounds.bounded(wide)
    assert len(json.dumps(out)) < 2 * bounds.VALUE_BYTES
    assert out["\u2026"].startswith("[cut: ")
    items = ["y" * 100] * 100_000
    out = bounds.bounded(items)
    assert len(json.dumps(out)) < 2 * bounds.VALUE_BYTES and out[-1].startswith("\u2026 [cut:")


def test_an_error_code_is_a_short_word() -> None:
    out = bounds.error({"code": "c" * 10_000, "message": "m" * 10})
    assert len(out["code"].encode()) <= bounds.WORD_BYTES
    assert out["message"] == "m" * 10
