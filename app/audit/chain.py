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
from json.encoder import encode_basestring
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
    """A copy that RFC 8785 accepts: big integers, NaN/infinities, odd keys and other types
    become strings. Never raises, so an audit entry can never be what fails a fact."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):  # a lone surrogate cannot be UTF-8: it becomes "?"
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, int):
        return value if -MAX_SAFE_INT <= value <= MAX_SAFE_INT else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {_jsonable(str(k)): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return format_at(value) if value.tzinfo else value.isoformat()
    return str(value)


def _canon(value: Any, out: list[str]) -> None:
    """RFC 8785, written with the C string escaper (the `rfc8785` package is pure Python
    and ~6x slower); floats, rare in payloads, go through `rfc8785` itself."""
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(encode_basestring(value))  # escapes exactly " \\ and U+0000..U+001F
    elif isinstance(value, int):
        if not -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
            raise ValueError("integer outside the I-JSON range")
        out.append(str(value))
    elif isinstance(value, float):
        out.append(rfc8785.dumps(value).decode("ascii"))
    elif isinstance(value, dict):
        out.append("{")
        # Members sorted by their UTF-16 code units, as RFC 8785 says.
        for i, key in enumerate(sorted(value, key=_utf16)):
            if i:
                out.append(",")
            out.append(encode_basestring(key))
            out.append(":")
            _canon(value[key], out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _canon(item, out)
        out.append("]")
    else:
        raise TypeError(f"not JSON: {type(value).__name__}")


def _utf16(key: Any) -> bytes:
    if not isinstance(key, str):
        raise TypeError("object keys must be strings")
    return key.encode("utf-16-be")


def canonical(value: Any) -> str:
    """RFC 8785 text of a JSON value; raises on what it cannot carry."""
    out: list[str] = []
    _canon(value, out)
    text = "".join(out)
    text.encode("utf-8")  # lone surrogates cannot be encoded: refuse them here
    return text


def canonical_payload(payload: Any) -> str:
    """The stored text of a payload: its RFC 8785 form (made encodable first if needed)."""
    try:
        return canonical(payload)
    except (TypeError, ValueError):
        return canonical(_jsonable(payload))


def prefix(entry: Entry) -> str:
    """The canonical encoding up to the previous hash: what is known before the head is.

    Keys in RFC 8785 order (all ASCII, so plain sorting): actor, at, kind,
    operation_id, payload, prev_hash, seq. The rest is `prev_hash` (hex) and `seq`.
    """
    return "".join(
        (
            '{"actor":',
            canonical(entry.actor),
            ',"at":',
            canonical(format_at(entry.at)),
            ',"kind":',
            canonical(entry.kind),
            ',"operation_id":',
            canonical(entry.operation_id),
            ',"payload":',
            entry.payload,
            ',"prev_hash":"',
        )
    )


def seal(head: str, prev_hash: str, seq: int) -> str:
    """The hash of an entry from its `prefix`, the previous hash and its seq.

    The same concatenation runs in SQL when an entry is appended (see `trail`).
    """
    return hashlib.sha256(f'{head}{prev_hash}","seq":{int(seq)}}}'.encode()).hexdigest()


def encode(entry: Entry) -> bytes:
    """RFC 8785 of the hashed fields, built around the already-canonical payload text.

    Equal, byte for byte, to `rfc8785.dumps({...})` with the payload parsed (a unit
    test holds it to that).
    """
    return f'{prefix(entry)}{entry.prev_hash}","seq":{entry.seq}}}'.encode()


def entry_hash(entry: Entry) -> str:
    return seal(prefix(entry), entry.prev_hash, entry.seq)


def sign_head(key: str, head_hash: str) -> str:
    """HMAC-SHA256 of the head hash (hex) under the operator's signing key."""
    return hmac.new(key.encode("utf-8"), head_hash.encode("ascii"), hashlib.sha256).hexdigest()


def signature_ok(key: str, head_hash: str, signature: str | None) -> bool:
    return signature is not None and hmac.compare_digest(sign_head(key, head_hash), signature)


def checkpoint_text(seq: int, head_hash: str, count: int) -> str:
    """What a checkpoint's HMAC covers: where the pruned prefix ended, and its length."""
    return f"checkpoint:{int(seq)}:{head_hash}:{int(count)}"


def sign_checkpoint(key: str, seq: int, head_hash: str, count: int) -> str:
    """HMAC-SHA256 of a checkpoint under the operator's signing key."""
    raw = checkpoint_text(seq, head_hash, count).encode("ascii")
    return hmac.new(key.encode("utf-8"), raw, hashlib.sha256).hexdigest()


def checkpoint_signature_ok(
    key: str, seq: int, head_hash: str, count: int, signature: str | None
) -> bool:
    return signature is not None and hmac.compare_digest(
        sign_checkpoint(key, seq, head_hash, count), signature
    )
