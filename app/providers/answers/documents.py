"""Result documents read as they stream in: JSON Lines item by item, never past a bound.

`LineReader` is fed the body's chunks as they arrive. It keeps each complete line's
verdict (the item succeeded or failed, by the profile's item rules), stops asking for
more once the document passes its byte bound, and hashes what it read, so a document
larger than the bound is never held in memory.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from app.providers.answers import bounds
from app.providers.expressions import pointers
from app.providers.expressions.pointers import MISSING
from app.providers.language.adapter import DEFAULT, Adapter
from app.providers.language.counts import Counts
from app.providers.language.spec_results import DocumentSpec, ItemRules


@dataclass(frozen=True)
class DocumentInfo:
    """What was read of one result document."""

    name: str
    role: str  # output | errors
    format: str  # json | jsonl
    url: str | None = None
    bytes: int = 0
    sha256: str | None = None  # of the bytes as they came (complete documents only)
    lines: int = 0  # jsonl: lines read
    succeeded: int = 0  # jsonl: lines whose item succeeded
    failed: int = 0  # jsonl: lines whose item failed
    complete: bool = False  # read to the end, within the bound, every line readable
    truncated: bool = False  # stopped at the bound (max_bytes): the rest was never read
    skipped: str | None = None  # why it was not fetched (an optional document without address)
    error: str | None = None


HEAD_BYTES = 16 * 1024  # the start of a document kept for the exchange record


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    return bool(a == b)


def item_verdict(
    rules: ItemRules, role: str, line: Any, judged: bool | None = None
) -> tuple[bool, dict[str, Any]]:
    """(succeeded, failed-item record) for one line: ``judged`` (the adapter's word) when
    given, else the document's item rules."""
    status = pointers.get(line, rules.status) if rules.status else MISSING
    if judged is not None:
        ok = judged
    elif rules.status is None:
        ok = role == "output"
    else:
        ok = any(_same(status, v) for v in rules.succeeded)
    error: Any = None
    for pointer in rules.error:
        found = pointers.get(line, pointer)
        if found is not MISSING and found is not None:
            error = found
            break
    record: dict[str, Any] = {}
    if rules.id is not None:
        found_id = pointers.get(line, rules.id)
        record["id"] = None if found_id is MISSING else found_id
    if status is not MISSING:
        record["status"] = status
    record["error"] = error
    return ok, record


@dataclass
class LineReader:
    """Feed it chunks; it splits lines, judges items and stops at ``limit`` bytes."""

    spec: DocumentSpec
    limit: int
    hooks: Adapter = DEFAULT
    size: int = 0
    lines: int = 0
    ok: list[Any] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False
    error: str | None = None
    head: bytearray = field(default_factory=bytearray)
    _rest: bytes = b""
    _hash: Any = field(default_factory=hashlib.sha256)

    def feed(self, chunk: bytes) -> bool:
        """Take one chunk; False once reading must stop (over the bound, or a bad line)."""
        if self.size + len(chunk) > self.limit:
            self.truncated = True
            self.error = f"document {self.spec.name} exceeds max_bytes ({self.limit}); not read"
            return False
        self.size += len(chunk)
        self._hash.update(chunk)
        if len(self.head) < HEAD_BYTES:
            self.head += chunk[: HEAD_BYTES - len(self.head)]
        *complete, self._rest = (self._rest + chunk).split(b"\n")
        return all(self._line(raw) for raw in complete)

    def finish(self) -> None:
        """The body ended: the last line needs no newline."""
        if self._rest:
            self._line(self._rest)
            self._rest = b""

    def _line(self, raw: bytes) -> bool:
        if not raw.strip():
            return True
        self.lines += 1
        try:
            line = json.loads(raw)
        except ValueError:
            self.error = f"document {self.spec.name}: line {self.lines} is not JSON"
            return False
        judged = self.hooks.judge_line(self.spec.name, line)
        ok, record = item_verdict(self.spec.items, self.spec.role, line, judged)
        if ok:
            self.ok.append(line)
        else:
            self.failed.append({**bounds.bounded(record), "document": self.spec.name})
        return True

    def info(self, url: str | None) -> DocumentInfo:
        done = self.error is None and not self.truncated
        return DocumentInfo(
            self.spec.name, self.spec.role, "jsonl", url, self.size,
            self._hash.hexdigest() if done else None, self.lines, len(self.ok),
            len(self.failed), done, self.truncated, None, self.error,
        )  # fmt: skip


def item_counts(readers: list[LineReader]) -> Counts:
    """Counts from the lines themselves (``counts.source: items``)."""
    ok = sum(len(r.ok) for r in readers)
    failed = sum(len(r.failed) for r in readers)
    return Counts(total=ok + failed, succeeded=ok, failed=failed)
