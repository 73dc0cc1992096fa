"""The hash chain itself: canonical encoding of an entry, its hash, the head signature.

An entry's hash is

    sha256(RFC 8785 canonical JSON of
           {"seq", "at", "kind", "operation_id", "actor", "payload", "prev_hash"})

as lowercase hex. `at` is UTC, ISO 8601 with microseconds and a `Z`; the first
entry's `prev_hash` is `GENESIS`. Pure functions only: no database, no clock.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import rfc8785

GENESIS = "0" * 64  # prev_hash of the first entry
MAX_SAFE_INT = 2**53 - 1  # RFC 8785 (I-JSON) numbers beyond this are stored as strings


@dataclass(frozen=True)
class Entry:
    """One audit entry as stored: `payload` is its canonical JSON text."""

    seq: int
    at: datetime
    kind: str
    operation_id: str | None
    actor: str
    payload: str
    prev_hash: str
    hash: str = ""


def format_at(at: datetime) -> str:
    """The one text form of a timestamp inside the hash: UTC, microseconds, `Z`."""
    if at.tzinfo is None:
        raise ValueError("naive datetime given to the audit chain")
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _jsonable(value: Any) -> Any:
    """A copy that RFC 8785 accepts: big integers, NaN/infinities and odd keys become strings."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -MAX_SAFE_INT <= value <= MAX_SAFE_INT else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return format_at(value) if value.tzinfo else value.isoformat()
    return str(value)


def canonical_payload(payload: Any) -> str:
    """The stored text of a payload: its RFC 8785 form (made encodable first if needed)."""
    try:
        raw = rfc8785.dumps(payload)
    except (rfc8785.CanonicalizationError, TypeError, ValueError):
        raw = rfc8785.dumps(_jsonable(payload))
    return raw.decode("utf-8")


def encode(entry: Entry) -> bytes:
    """RFC 8785 of the hashed fields, built around the already-canonical payload text.

    Keys in RFC 8785 order (all ASCII, so plain sorting): actor, at, kind,
    operation_id, payload, prev_hash, seq. Equal, byte for byte, to
    `rfc8785.dumps({...})` with the payload parsed (a unit test holds it to that).
    """
    return b"".join(
        (
            b'{"actor":',
            rfc8785.dumps(entry.actor),
            b',"at":',
            rfc8785.dumps(format_at(entry.at)),
            b',"kind":',
            rfc8785.dumps(entry.kind),
            b',"operation_id":',
            rfc8785.dumps(entry.operation_id),
            b',"payload":',
            entry.payload.encode("utf-8"),
            b',"prev_hash":',
            rfc8785.dumps(entry.prev_hash),
            b',"seq":',
            rfc8785.dumps(entry.seq),
            b"}",
        )
    )


def entry_hash(entry: Entry) -> str:
    return hashlib.sha256(encode(entry)).hexdigest()


def sign_head(key: str, head_hash: str) -> str:
    """HMAC-SHA256 of the head hash (hex) under the operator's signing key."""
    return hmac.new(key.encode("utf-8"), head_hash.encode("ascii"), hashlib.sha256).hexdigest()


def signature_ok(key: str, head_hash: str, signature: str | None) -> bool:
    return signature is not None and hmac.compare_digest(sign_head(key, head_hash), signature)
