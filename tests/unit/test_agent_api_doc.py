"""docs/agent-api.md is contract v2: it must name every error code the gateway can
answer, every status, state and outcome, every body field and every vocabulary phrase."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from app.operations.api.error_docs import CODES
from app.operations.contract import wording
from app.operations.contract.schemas import OperationBody
from app.operations.domain.states import State

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "agent-api.md").read_text()
# The gateway's own answers (the mock provider and the provider fakes speak for providers).
NOT_GATEWAY = ("jobgate_fakes/mock/", "jobgate_fakes/providers/")
RAISED = re.compile(r"(?:ApiError|error_response)\(\s*\d{3},\s*\"([a-z_]+)\"")
# Domain errors (app/core/http/errors.py) carry no status; the one mapping to HTTP gives it.
DOMAIN = re.compile(r"(?:BadInput|NotFound|Conflict|Invalid)\(\s*\"([a-z_]+)\"")
LITERAL = re.compile(r"\"code\": \"([a-z_]+)\"")
# the HTTP-status -> code map in app/core/http/errors.py
MAPPED = re.compile(r"\d{3}: \"([a-z_]+)\"")


def gateway_error_codes() -> set[str]:
    codes: set[str] = set()
    for path in (ROOT / "app").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(NOT_GATEWAY):
            continue
        text = path.read_text()
        codes |= set(RAISED.findall(text)) | set(DOMAIN.findall(text)) | set(LITERAL.findall(text))
        if rel == "app/core/http/errors.py":
            codes |= set(MAPPED.findall(text))
    return codes


def test_the_scan_finds_the_codes_it_should() -> None:
    found = gateway_error_codes()
    assert {"idempotency_key_required", "operation_done", "body_too_large", "not_found"} <= found
    assert "job_not_found" not in found  # the mock provider's, not the gateway's


def test_every_error_code_the_gateway_answers_is_documented() -> None:
    missing = sorted(c for c in gateway_error_codes() | set(CODES) if f"`{c}`" not in DOC)
    assert not missing, f"add these codes to docs/agent-api.md: {missing}"


def test_every_status_state_and_outcome_is_documented() -> None:
    statuses = get_args(OperationBody.model_fields["status"].annotation)
    outcomes = get_args(get_args(OperationBody.model_fields["outcome"].annotation)[0])
    words = {*statuses, *outcomes, *(s.value for s in State)}
    assert not sorted(w for w in words if f"`{w}`" not in DOC)


def test_every_body_field_is_documented() -> None:
    assert not sorted(f for f in OperationBody.model_fields if f"`{f}`" not in DOC)


def test_every_vocabulary_phrase_is_documented() -> None:
    for phrases in wording.VOCABULARIES.values():
        for phrase in phrases:
            assert phrase in DOC, phrase


def test_the_readme_links_the_contract() -> None:
    assert "docs/agent-api.md" in (ROOT / "README.md").read_text()
