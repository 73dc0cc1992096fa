"""`jobgate audit verify` and `jobgate audit export`: what they print and their exit codes."""

from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TextIO

from app.audit import reader
from app.audit.verify import Report, verify


def verify_database(database_url: str, signing_key: str | None) -> Report:
    """Verify the chain in the database, against its head (and signature, given a key)."""
    with reader.snapshot(database_url) as conn:
        head = reader.head(conn)
        found: dict[str, int | None] = {}

        def find(value: str) -> int | None:
            if value not in found:
                found[value] = reader.seq_of_hash(conn, value)
            return found[value]

        # Streamed: the walk holds one entry at a time and stops at the first break.
        return verify(reader.entries(conn), head, find, signing_key=signing_key)


def verify_file(path: Path) -> Report:
    """Verify an export (no head to compare the end with; a removed tail goes unseen)."""
    by_hash: dict[str, int] = {}
    with path.open(encoding="utf-8") as fh:  # first pass: only the hashes, for `find`
        for line in fh:
            if line.strip():
                record = json.loads(line)
                by_hash[record["hash"]] = int(record["seq"])
    with path.open(encoding="utf-8") as fh:
        rows = (reader.from_json(line) for line in fh if line.strip())
        return verify(rows, None, by_hash.get)


def outcome(report: Report) -> tuple[int, str]:
    """(exit code, text): 0 with a count on an intact chain, 1 naming the first broken entry."""
    if report.ok:
        return 0, f"audit chain intact: {report.count} entries (last seq {report.last_seq})"
    return 1, (
        f"audit chain BROKEN at entry {report.seq} ({report.what}): {report.problem}\n"
        f"{report.count} entries before it verified"
    )


def export(database_url: str, out: Path | None) -> int:
    """Write every entry as JSON Lines to `out` (stdout when None); returns the count."""
    n = 0
    with ExitStack() as stack:
        fh: TextIO = (
            stack.enter_context(out.open("w", encoding="utf-8")) if out is not None else sys.stdout
        )
        conn = stack.enter_context(reader.snapshot(database_url))
        for entry in reader.entries(conn):
            fh.write(reader.to_json(entry) + "\n")
            n += 1
    return n
