"""The chain format: the hashed bytes are RFC 8785 of the documented fields, and any
payload a history row may carry can be encoded."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from app.audit.chain import (
    GENESIS,
    Entry,
    canonical,
    canonical_payload,
    encode,
    entry_hash,
    sign_head,
    signature_ok,
)
from app.audit.verify import Anchor, Head, Row, Unreadable, verify

AT = datetime(2026, 12, 1, 4, 13, 31, 5, tzinfo=UTC)


def test_the_hashed_bytes_are_rfc8785_of_the_documented_fields() -> None:
    payload = {"z": [1, 2.5, "é", None], "a": {"nested": True}, "n": 1e21}
    e = Entry(7, AT, "transition", "op_1", "observer:x", canonical_payload(payload), GENESIS)
    expected = rfc8785.dumps(
        {
            "seq": 7,
            "at": "2026-12-01T04:13:31.000005Z",
            "kind": "transition",
            "operation_id": "op_1",
            "actor": "observer:x",
            "payload": payload,
            "prev_hash": GENESIS,
        }
    )
    assert encode(e) == expected
    assert entry_hash(e) == hashlib.sha256(expected).hexdigest()
    assert encode(Entry(1, AT, "key_created", None, "cli", "null", GENESIS)).count(b"null") == 2


def test_keys_sort_by_utf16_code_units() -> None:
    value = {"\ue000": 1, "\U0001f600": 2, "a": 3}  # U+1F600 is D83D DE00 in UTF-16
    assert canonical(value) == rfc8785.dumps(value).decode("utf-8")
    assert canonical(value).index("\U0001f600") < canonical(value).index("\ue000")


def test_payloads_outside_i_json_are_kept_as_strings() -> None:
    text = canonical_payload({"big": 2**64, "nan": float("nan"), 3: "int key"})
    assert json.loads(text) == {"big": str(2**64), "nan": "nan", "3": "int key"}
    assert canonical_payload(json.loads(text)) == text  # stable once stored
    odd = canonical_payload({"lone": "a\ud800b", "when": AT, "what": object})
    assert (
        json.loads(odd)["lone"] == "a?b"
        and json.loads(odd)["when"] == "2026-12-01T04:13:31.000005Z"
    )


def test_the_head_signature_is_an_hmac_of_its_hash() -> None:
    sig = sign_head("k1", "ab" * 32)
    assert signature_ok("k1", "ab" * 32, sig)
    assert not signature_ok("k2", "ab" * 32, sig)
    assert not signature_ok("k1", "ab" * 32, None)


def _chain(n: int) -> list[Entry]:
    out, prev = [], GENESIS
    for seq in range(1, n + 1):
        e = Entry(seq, AT, "note", None, "test", canonical_payload({"i": seq}), prev)
        e = Entry(e.seq, e.at, e.kind, e.operation_id, e.actor, e.payload, prev, entry_hash(e))
        out.append(e)
        prev = e.hash
    return out


def test_verify_counts_an_intact_chain_and_checks_the_head_signature() -> None:
    rows = _chain(5)
    head = Head(5, rows[-1].hash, sign_head("key", rows[-1].hash))
    report = verify(rows, head, lambda _: None, signing_key="key")
    assert report.ok and report.count == 5
    forged = Head(5, rows[-1].hash, "0" * 64)
    assert verify(rows, forged, lambda _: None, signing_key="key").what == "signature"
    assert verify([], Head(0, GENESIS), lambda _: None).ok


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
@settings(max_examples=400, deadline=None)
def test_the_fast_encoder_is_rfc8785(value: object) -> None:
    try:
        expected = rfc8785.dumps(value).decode("utf-8")
    except rfc8785.CanonicalizationError:  # e.g. lone surrogates: refused by both
        with pytest.raises(ValueError):
            canonical(value)
        return
    assert canonical(value) == expected


def test_verify_names_each_kind_of_break() -> None:
    rows = _chain(6)
    by_hash = {e.hash: e.seq for e in rows}
    seqs = {e.seq for e in rows}

    def run(changed: list[Row], **kw: object) -> tuple[str | None, int | None]:
        report = verify(changed, None, by_hash.get, has_seq=seqs.__contains__,
                        check_head=False, **kw)  # type: ignore[arg-type]  # fmt: skip
        return report.what, report.seq

    assert run([*rows[:2], rows[3], rows[2], *rows[4:]]) == ("reordered", 3)
    cut = [*rows[:2], *rows[3:]]
    left = {e.seq for e in cut}
    assert verify(cut, None, by_hash.get, has_seq=left.__contains__, check_head=False).what == (
        "removed"
    )
    assert run([*rows[:2], Unreadable(3, "its time 'x' is not a timestamp"), *rows[3:]]) == (
        "tampered",
        3,
    )
    assert run([*rows[:3], rows[2], *rows[3:]]) == ("inserted", 3)
    assert run(rows, anchor=Anchor(8, "f" * 64)) == ("rollback", 7)
    assert run(rows, anchor=Anchor(4, "f" * 64)) == ("rollback", 4)
    assert run(rows, anchor=Anchor(4, rows[3].hash)) == (None, None)
    assert verify(rows, None, lambda _: None).what == "head"  # the head row is gone
