"""Recompute the chain and name the first entry that was edited, removed, inserted or
reordered. Pure: rows come in as an iterable, lookups through a callable.

The walk keeps only the previous entry, so any length verifies in constant
memory; a break is classified afterwards with one lookup (whose hash did the
broken entry point to?):

- own hash does not match its fields         -> that entry was edited;
- points to an entry that comes later        -> it was reordered;
- points to an entry further back            -> the ones in between were inserted;
- points to no entry, and seq numbers skip   -> the skipped entries were removed;
- points to no entry, no skip                -> the entry before it was edited (rehashed).
The head row (last seq and hash, written by every append) catches changes at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from app.audit.chain import GENESIS, Entry, entry_hash, signature_ok


@dataclass(frozen=True)
class Head:
    seq: int
    hash: str
    signature: str | None = None


@dataclass(frozen=True)
class Report:
    """The outcome: `problem` is None on an intact chain."""

    count: int  # entries read
    last_seq: int
    problem: str | None = None
    seq: int | None = None  # the first entry concerned
    what: str | None = None  # edited | removed | inserted | reordered | head | signature

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class _Break:
    row: Entry  # the entry at which the chain stopped holding
    last_seq: int  # the entry before it (0: none)
    expected_seq: int
    link_ok: bool


def _scan(rows: Iterable[Entry]) -> tuple[int, int, str, _Break | None]:
    """(count, last seq, last hash, first break or None)."""
    count, last_seq, prev = 0, 0, GENESIS
    for row in rows:
        expected_seq = last_seq + 1
        link_ok = row.prev_hash == prev
        if not link_ok or row.seq != expected_seq or entry_hash(row) != row.hash:
            return count, last_seq, prev, _Break(row, last_seq, expected_seq, link_ok)
        count, last_seq, prev = count + 1, row.seq, row.hash
    return count, last_seq, prev, None


def _classify(b: _Break, find: Callable[[str], int | None]) -> tuple[str, int, str]:
    """(what, seq, sentence) for a break."""
    r = b.row
    if b.link_ok:
        if r.seq != b.expected_seq:
            first, last = b.expected_seq, r.seq - 1
            return "removed", first, f"entries {first}..{last} were removed (seq jumps to {r.seq})"
        return "edited", r.seq, f"entry {r.seq} was edited: its hash does not match its fields"
    target = 0 if r.prev_hash == GENESIS else find(r.prev_hash)  # genesis comes before 1
    if target is not None and target > r.seq:
        return (
            "reordered",
            r.seq,
            f"entry {r.seq} is out of order: it was chained after entry {target}",
        )
    if target is not None and target < b.last_seq:
        return (
            "inserted",
            target + 1,
            f"entry {target + 1} was inserted: entry {r.seq} was chained to entry {target}",
        )
    if target is None and r.seq > b.expected_seq:
        first, last = b.expected_seq, r.seq - 1
        return "removed", first, f"entries {first}..{last} were removed (seq jumps to {r.seq})"
    if b.last_seq == 0:
        return "edited", r.seq, f"entry {r.seq} was edited: the first entry must follow genesis"
    return (
        "edited",
        b.last_seq,
        f"entry {b.last_seq} was edited: entry {r.seq} recorded a different hash for it",
    )


def verify(
    rows: Iterable[Entry],
    head: Head | None,
    find: Callable[[str], int | None],
    *,
    signing_key: str | None = None,
) -> Report:
    """Walk `rows` (ascending seq); `head` None skips the end checks (e.g. an export file)."""
    count, last_seq, last_hash, brk = _scan(rows)
    if brk is not None:
        what, seq, text = _classify(brk, find)
        return Report(count, last_seq, text, seq, what)
    if head is None:
        return Report(count, last_seq)
    if head.seq > last_seq:
        text = f"entries {last_seq + 1}..{head.seq} were removed (the head records {head.seq})"
        return Report(count, last_seq, text, last_seq + 1, "removed")
    if head.seq < last_seq:
        text = f"entries {head.seq + 1}..{last_seq} were inserted after the recorded head"
        return Report(count, last_seq, text, head.seq + 1, "inserted")
    if head.hash != last_hash:
        text = f"entry {last_seq} was edited: the head records a different hash for it"
        return Report(count, last_seq, text, last_seq, "edited")
    if signing_key is not None and not signature_ok(signing_key, head.hash, head.signature):
        why = "is not signed" if head.signature is None else "has a signature that does not match"
        text = f"the chain head (entry {head.seq}) {why} under the configured signing key"
        return Report(count, last_seq, text, head.seq, "signature")
    return Report(count, last_seq)
