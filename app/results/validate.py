"""Checks a fetched result against what the profile and the operation ask for."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import jsonschema
import rfc8785


@dataclass(frozen=True)
class Rules:
    """What a result must satisfy before the operation may be called succeeded."""

    checksum: str = "none"  # none | sha256_rfc8785
    max_bytes: int | None = None
    json_schema: dict[str, Any] | None = None
    require_counts: bool = False  # processed == succeeded + failed + not_processed


@dataclass(frozen=True)
class Verdict:
    ok: bool
    code: str | None = None
    message: str | None = None
    size: int = 0
    sha256: str = ""


def canonical(data: Any) -> bytes:
    """RFC 8785 canonical JSON bytes (what checksums and fingerprints are taken over)."""
    return rfc8785.dumps(data)


def check(
    data: Any, *, claimed_sha256: str | None, items: dict[str, int] | None, rules: Rules
) -> Verdict:
    """Validate one result; a failed check names which and why."""
    raw = canonical(data)
    size, digest = len(raw), hashlib.sha256(raw).hexdigest()

    def bad(code: str, message: str) -> Verdict:
        return Verdict(False, code, message, size, digest)

    if rules.max_bytes is not None and size > rules.max_bytes:
        return bad("result_too_large", f"result is {size} bytes, limit {rules.max_bytes}")
    if rules.checksum == "sha256_rfc8785":
        if not claimed_sha256:
            return bad("checksum_missing", "the provider sent no sha256 for the result")
        if claimed_sha256.lower() != digest:
            return bad(
                "checksum_mismatch",
                f"provider claimed sha256 {claimed_sha256[:16]}..., content hashes to "
                f"{digest[:16]}...",
            )
    if rules.json_schema is not None:
        try:
            jsonschema.validate(data, rules.json_schema)
        except jsonschema.ValidationError as exc:
            return bad("schema_mismatch", f"result does not match its schema: {exc.message}")
    if items and rules.require_counts:
        processed = items.get("processed", 0)
        parts = ("succeeded", "failed", "not_processed")
        if processed != sum(items.get(k, 0) for k in parts):
            return bad("item_counts_inconsistent", f"item counts do not add up: {items}")
    return Verdict(True, size=size, sha256=digest)
