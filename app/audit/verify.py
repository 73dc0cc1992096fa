"""Recompute the chain and name the first entry that was edited, removed, inserted,
reordered or left unreadable, then check the end against the head and an anchor.
Pure: rows come in as an iterable, lookups through callables.

The walk keeps only the previous entry, so any length verifies in constant
memory; a break is classified afterwards with a lookup or two:

- cannot be read back as an entry (a garbled timestamp) -> that entry was tampered with;
- seq skips, and the skipped entry comes later             -> it was reordered;
- seq skips, and the skipped entries are nowhere           -> they were removed;
- own hash does not match its fields                       -> that entry was edited;
- points to an entry that comes later                      -> it was reordered;
- points to an entry further back                          -> the ones in between were inserted;
- points to no entry                                        -> the entry before it was edited.
The head row (last seq and hash, written by every append) catches changes at the end;
an anchor kept outside the database (docs/audit.md) catches a head rolled back with
the log cut to match.

After a prune the chain starts at a checkpoint (the last removed entry's seq and hash,
and how many entries the removed prefix held, signed under the audit key): the walk
starts from it instead of genesis, and with a key its signature must hold. An anchor
inside the pruned prefix is compared with a checkpoint at its seq when there is one;
otherwise only "the chain reaches past it" can be checked, and the report says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from app.audit.chain import GENESIS, Entry, checkpoint_signature_ok, entry_hash, signature_ok


@dataclass(frozen=True)
class Head:
    seq: int
    hash: str
    signature: str | None = None


@dataclass(frozen=True)
class Anchor:
    """An entry of the chain as the operator saw it earlier: the chain must still hold
    it, unchanged, and must not end before it."""

    seq: int
    hash: str


@dataclass(frozen=True)
class Checkpoint:
    """Where a pruned prefix ended: entries 1..`seq` are gone, `hash` was entry `seq`'s,
    and the prefix held `count` entries."""

    seq: int
    hash: str
    count: int
    signature: str | None = None


@dataclass(frozen=True)
class Unreadable:
    """A stored entry that cannot be read back as one (`seq` None when even that is gone)."""

    seq: int | None
    why: str
    where: str = ""  # e.g. "line 12 of trail.jsonl"


Row = Entry | Unreadable


@dataclass(frozen=True)
class Report:
    """The outcome: `problem` is None on an intact chain."""

    count: int  # entries read
    last_seq: int
    problem: str | None = None
    seq: int | None = None  # the first entry concerned
    # tampered | edited | removed | inserted | reordered | head | signature | rollback
    what: str | None = None
    last_hash: str = GENESIS
    checkpoint: Checkpoint | None = None  # where the walk started, after a prune
    anchor_pruned: bool = False  # the anchor's entry was pruned and no checkpoint is at it

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class _Break:
    row: Row  # the entry at which the chain stopped holding
    last_seq: int  # the entry before it (0: none)
    expected_seq: int
    link_ok: bool  # it points to the entry before it
    at_start: bool = False  # the entry before it is the checkpoint's (pruned)


@dataclass(frozen=True)
class _Walk:
    count: int
    last_seq: int
    last_hash: str
    broken: _Break | None
    anchored: str | None  # the hash of the anchored entry, if the walk passed it


def _scan(rows: Iterable[Row], watch: int | None, start: Checkpoint | None) -> _Walk:
    count, last_seq, prev, anchored = 0, 0, GENESIS, None
    if start is not None:
        count, last_seq, prev = start.count, start.seq, start.hash
    for row in rows:
        expected_seq = last_seq + 1
        if (
            isinstance(row, Unreadable)
            or row.prev_hash != prev
            or row.seq != expected_seq
            or entry_hash(row) != row.hash
        ):
            link_ok = isinstance(row, Entry) and row.prev_hash == prev
            at_start = start is not None and last_seq == start.seq
            brk = _Break(row, last_seq, expected_seq, link_ok, at_start)
            return _Walk(count, last_seq, prev, brk, anchored)
        count, last_seq, prev = count + 1, row.seq, row.hash
        if row.seq == watch:
            anchored = row.hash
    return _Walk(count, last_seq, prev, None, anchored)


def _classify(
    b: _Break, find: Callable[[str], int | None], has_seq: Callable[[int], bool]
) -> tuple[str, int, str]:
    """(what, seq, sentence) for a break."""
    r = b.row
    if isinstance(r, Unreadable):
        seq = r.seq if r.seq is not None else b.expected_seq
        where = f" ({r.where})" if r.where else ""
        return "tampered", seq, f"entry {seq} was tampered with{where}: {r.why}"
    if r.seq == b.last_seq:
        return "inserted", r.seq, f"entry {r.seq} appears twice"
    if r.seq < b.expected_seq:
        return (
            "reordered",
            r.seq,
            f"entry {r.seq} is out of order: it comes after entry {b.last_seq}",
        )
    if r.seq > b.expected_seq:
        first, last = b.expected_seq, r.seq - 1
        if has_seq(first):
            return (
                "reordered",
                first,
                f"entry {first} is out of order: entry {r.seq} comes before it",
            )
        return "removed", first, f"entries {first}..{last} were removed (seq jumps to {r.seq})"
    if b.link_ok:
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
    if b.last_seq == 0:
        return "edited", r.seq, f"entry {r.seq} was edited: the first entry must follow genesis"
    if b.at_start:
        return (
            "edited",
            r.seq,
            f"entry {r.seq} was edited: it does not follow the checkpoint at entry {b.last_seq}",
        )
    return (
        "edited",
        b.last_seq,
        f"entry {b.last_seq} was edited: entry {r.seq} recorded a different hash for it",
    )


def verify(
    rows: Iterable[Row],
    head: Head | None,
    find: Callable[[str], int | None],
    *,
    has_seq: Callable[[int], bool] = lambda seq: False,
    signing_key: str | None = None,
    anchor: Anchor | None = None,
    check_head: bool = True,
    start: Checkpoint | None = None,
    checkpoint_hash: Callable[[int], str | None] = lambda seq: None,
) -> Report:
    """Walk `rows` (ascending seq) from genesis, or from the checkpoint `start` after a
    prune; `check_head` False skips the end checks (an export file has no head); `head`
    None with `check_head` means the head row is missing. `checkpoint_hash` gives the
    hash an earlier checkpoint recorded at a seq (an anchor inside the pruned prefix)."""
    walk = _scan(rows, anchor.seq if anchor else None, start)
    count, last_seq, last_hash = walk.count, walk.last_seq, walk.last_hash

    def report(text: str | None = None, seq: int | None = None, what: str | None = None,
               pruned: bool = False) -> Report:  # fmt: skip
        return Report(count, last_seq, text, seq, what, last_hash, start, pruned)

    if walk.broken is not None:
        what, seq, text = _classify(walk.broken, find, has_seq)
        return report(text, seq, what)
    if start is not None and signing_key is not None:
        if not checkpoint_signature_ok(
            signing_key, start.seq, start.hash, start.count, start.signature
        ):
            why = (
                "is not signed"
                if start.signature is None
                else "has a signature that does not match"
            )
            text = (
                f"the audit checkpoint at entry {start.seq} {why} under the configured signing key"
            )
            return report(text, start.seq, "signature")
    if check_head:
        problem = _head_problem(head, last_seq, last_hash, signing_key)
        if problem is not None:
            what, seq, text = problem
            return report(text, seq, what)
    if anchor is None:
        return report()
    if anchor.seq > last_seq:
        text = (
            f"the chain ends at entry {last_seq} but the anchor holds entry {anchor.seq}: "
            f"entries {last_seq + 1}..{anchor.seq} were removed and the head rolled back"
        )
        return report(text, last_seq + 1, "rollback")
    if start is not None and 0 < anchor.seq <= start.seq:  # inside the pruned prefix
        recorded = start.hash if anchor.seq == start.seq else checkpoint_hash(anchor.seq)
        if recorded is None:
            return report(pruned=True)
        anchored = recorded
    else:
        anchored = walk.anchored or ""
    if anchor.seq > 0 and anchored != anchor.hash:
        text = (
            f"entry {anchor.seq} differs from the anchor: the chain from there was "
            "rolled back and rewritten after the anchor was taken"
        )
        return report(text, anchor.seq, "rollback")
    return report()


def _head_problem(
    head: Head | None, last_seq: int, last_hash: str, signing_key: str | None
) -> tuple[str, int, str] | None:
    if head is None:
        return "head", last_seq, "the chain head (audit_head) is missing: it was deleted"
    if head.seq > last_seq:
        text = f"entries {last_seq + 1}..{head.seq} were removed (the head records {head.seq})"
        return "removed", last_seq + 1, text
    if head.seq < last_seq:
        text = f"entries {head.seq + 1}..{last_seq} were inserted after the recorded head"
        return "inserted", head.seq + 1, text
    if head.hash != last_hash:
        text = f"entry {last_seq} was edited: the head records a different hash for it"
        return "edited", last_seq, text
    if signing_key is not None and not signature_ok(signing_key, head.hash, head.signature):
        why = "is not signed" if head.signature is None else "has a signature that does not match"
        text = f"the chain head (entry {head.seq}) {why} under the configured signing key"
        return "signature", head.seq, text
    return None
