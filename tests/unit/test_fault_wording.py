"""The words of a fault's answer, by call (app/core/http/fault_words.py)."""

from __future__ import annotations

import pytest

from app.core.http.fault_words import CreateInterrupted, call_of, find_create, words


@pytest.mark.parametrize(
    ("method", "path", "call"),
    [
        ("GET", "/v1/operations/op_1/wait", "read"),
        ("HEAD", "/v1/operations", "read"),
        ("POST", "/v1/operations", "create"),
        ("POST", "/v1/operations/", "create"),
        ("POST", "/v1/operations/op_1/cancel", "write"),
        ("POST", "/v1/operations/op_1/approve", "write"),
    ],
)
def test_call_of(method: str, path: str, call: str) -> None:
    assert call_of(method, path) == call


@pytest.mark.parametrize("kind", ["storage_full", "database_busy", "database_unavailable"])
def test_only_a_create_known_unrecorded_says_nothing_was_sent(kind: str) -> None:
    said = {
        intent: words(kind, "create", 30, CreateInterrupted(intent, "op_1"))[0]
        for intent in ("not_recorded", "unknown", "recorded")
    }
    assert "sent nothing to the provider" in said["not_recorded"]
    assert "recorded nothing" in said["not_recorded"]
    assert "recorded nothing" not in said["unknown"] + said["recorded"]
    assert "sent nothing" not in said["recorded"] and "op_1" in said["recorded"]
    for message in said.values():
        assert "SAME Idempotency-Key" in message and "Retry after 30 seconds" in message
    unannotated = words(kind, "create", 30, None)[0]
    assert unannotated == said["unknown"]  # a create that says nothing is not known


def test_the_create_is_found_under_what_wraps_it() -> None:
    inner = CreateInterrupted("recorded", "op_1")
    try:
        try:
            raise inner
        except CreateInterrupted as e:
            raise RuntimeError("wrapped") from e
    except RuntimeError as outer:
        assert find_create(outer) is inner
