"""`jobgate audit verify` and `jobgate audit export`: what they print and their exit codes.

Exit codes of verify: 0 intact, 1 broken (the first break, named), 2 could not verify
(the database cannot be read, a file or an anchor that is not one). Nothing here lets
an exception through with a traceback: a stored row that cannot be read is a break.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from sqlalchemy import make_url
from sqlalchemy.exc import SQLAlchemyError

from app.audit import reader
from app.audit.verify import Anchor, Checkpoint, Report, Row, Unreadable, verify


class CannotVerify(Exception):
    """The trail could not be read at all (exit 2); the message is one line."""


def require_database(database_url: str, *, is_default: bool) -> None:
    """`CannotVerify` when the URL names a SQLite file that does not exist: connecting
    would create an empty one, and the reader should learn where jobgate looked and how
    to point it at the gateway's database instead (docs/audit.md, "Verifying")."""
    url = make_url(database_url)
    if not url.drivername.startswith("sqlite") or url.database in (None, "", ":memory:"):
        return
    path = Path(url.database).resolve()
    if path.exists():
        return
    if is_default:
        raise CannotVerify(
            f"no jobgate database at {path} (JOBGATE_DATABASE_URL is unset: the default is "
            "jobgate.db in JOBGATE_DATA_DIR, ./data of the directory this runs in unless "
            "set); run it where `jobgate serve` runs, or set JOBGATE_DATABASE_URL or "
            "JOBGATE_DATA_DIR to the gateway's database"
        )
    raise CannotVerify(f"no database file at {path} (JOBGATE_DATABASE_URL)")


def verify_database(
    database_url: str, signing_key: str | None, anchor: Anchor | None = None
) -> Report:
    """Verify the chain in the database, against its head (and signature, given a key)
    and an anchor kept elsewhere."""
    try:
        with reader.snapshot(database_url) as conn:
            head = reader.head(conn)
            found: dict[str, int | None] = {}

            def find(value: str) -> int | None:
                if value not in found:
                    found[value] = reader.seq_of_hash(conn, value)
                return found[value]

            # After a prune the chain starts at the newest checkpoint (docs/audit.md).
            start = reader.checkpoint(conn)
            # Streamed: the walk holds one entry at a time and stops at the first break.
            # Rows come in seq order, so a skipped seq is nowhere (has_seq's default).
            return verify(
                reader.entries(conn, start.seq if start else 0),
                head,
                find,
                signing_key=signing_key,
                anchor=anchor,
                start=start,
                checkpoint_hash=lambda seq: reader.checkpoint_hash(conn, seq),
            )
    except SQLAlchemyError as exc:
        raise CannotVerify(f"cannot read the audit trail: {_first_line(exc)}") from None


def verify_file(path: Path, anchor: Anchor | None = None) -> Report:
    """Verify an export (no head to compare the end with: a removed tail goes unseen
    unless an anchor says where the chain reached)."""
    by_hash: dict[str, int] = {}
    seqs: set[int] = set()
    try:
        start = _file_checkpoint(path)
        for _, row in _file_rows(path):  # first pass: hashes and seqs, for the lookups
            if not isinstance(row, Unreadable):
                by_hash.setdefault(row.hash, row.seq)
                seqs.add(row.seq)
        rows = (row for _, row in _file_rows(path))
        return verify(rows, None, by_hash.get, has_seq=seqs.__contains__, anchor=anchor,
                      check_head=False, start=start)  # fmt: skip
    except (OSError, UnicodeDecodeError) as exc:
        raise CannotVerify(f"cannot read {path}: {_first_line(exc)}") from None


def _file_checkpoint(path: Path) -> Checkpoint | None:
    """The checkpoint an export after a prune starts with (its first line), if any."""
    with path.open(encoding="utf-8") as fh:
        first = fh.readline()
    return reader.checkpoint_from_json(first) if first.strip() else None


def _file_rows(path: Path) -> Iterator[tuple[int, Row]]:
    """Streamed: one line in memory at a time (a first line that is a checkpoint is not
    an entry)."""
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if n == 1 and reader.checkpoint_from_json(line) is not None:
                continue
            if line.strip():
                yield n, reader.from_json(line, f"line {n} of {path.name}")


def read_anchor(path: Path) -> Anchor:
    """The anchor in `path`: a file `--save-anchor` wrote, or an export (its last entry)."""
    try:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        raise CannotVerify(f"cannot read the anchor {path}: {_first_line(exc)}") from None
    try:
        last = json.loads(lines[-1]) if lines else None
    except ValueError:
        last = None
    seq, value = (last.get("seq"), last.get("hash")) if isinstance(last, dict) else (None, None)
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0 or not isinstance(value, str):
        raise CannotVerify(f"{path} is not an anchor: its last line needs a seq and a hash")
    return Anchor(seq, value)


def save_anchor(path: Path, report: Report) -> None:
    """Write where an intact chain ends, atomically (a crash leaves the old anchor)."""
    record = {
        "seq": report.last_seq,
        "hash": report.last_hash,
        "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def outcome(report: Report) -> tuple[int, str]:
    """(exit code, text): 0 with a count on an intact chain, 1 naming the first broken entry."""
    if report.ok:
        text = f"audit chain intact: {report.count} entries (last seq {report.last_seq})"
        cp = report.checkpoint
        if cp is not None:
            signed = "signed" if cp.signature else "unsigned"
            text += (
                f"; entries 1..{cp.seq} were pruned after the retention period and are "
                f"covered by the {signed} checkpoint at entry {cp.seq}, where the walk started"
            )
        if report.anchor_pruned:
            text += (
                "; the anchor's entry was pruned since it was taken, so only that the chain "
                "reaches past it was checked"
            )
        return 0, text
    return 1, (
        f"audit chain BROKEN at entry {report.seq} ({report.what}): {report.problem}\n"
        f"{report.count} entries before it verified"
    )


def export(database_url: str, out: Path | None) -> int:
    """Write every entry as JSON Lines to `out` (stdout when None); returns the count.
    An entry that cannot be read stops the export with `CannotVerify` naming it."""
    n = 0
    try:
        with ExitStack() as stack:
            fh: TextIO = (
                stack.enter_context(out.open("w", encoding="utf-8"))
                if out is not None
                else sys.stdout
            )
            conn = stack.enter_context(reader.snapshot(database_url))
            start = reader.checkpoint(conn)
            if start is not None:  # the export starts where the pruned prefix ended
                fh.write(reader.checkpoint_json(start) + "\n")
            for entry in reader.entries(conn, start.seq if start else 0):
                if isinstance(entry, Unreadable):
                    raise CannotVerify(
                        f"entry {entry.seq} cannot be exported: {entry.why} "
                        "(`jobgate audit verify` names the break)"
                    )
                fh.write(reader.to_json(entry) + "\n")
                n += 1
    except SQLAlchemyError as exc:
        raise CannotVerify(f"cannot read the audit trail: {_first_line(exc)}") from None
    return n


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def cli(
    command: str,
    *,
    file: Path | None,
    anchor_file: Path | None,
    save_anchor_to: Path | None,
    out: Path | None,
) -> int:
    """`audit verify` (exit 1 at the first broken entry, 2 when it cannot be read) and
    `audit export` (JSON Lines); an anchor kept outside the database catches a rollback.
    Whatever happens, one line and never a traceback (docs/audit.md)."""
    from app.core.config import Settings

    settings = Settings()
    try:
        if command == "export" or file is None:
            require_database(settings.database_url, is_default=settings.database_is_default)
        if command == "export":
            n = export(settings.database_url, out)
            print(f"exported {n} audit entries", file=sys.stderr)
            return 0
        anchor = read_anchor(anchor_file) if anchor_file is not None else None
        if file is not None:
            report = verify_file(file, anchor)
        else:
            report = verify_database(settings.database_url, settings.audit_signing_key, anchor)
    except CannotVerify as exc:
        print(f"jobgate: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # not a verdict on the chain: it could not be checked
        print(f"jobgate: cannot verify: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    code, text = outcome(report)
    print(text, file=sys.stdout if code == 0 else sys.stderr)
    if code == 0 and save_anchor_to is not None:
        save_anchor(save_anchor_to, report)
        print(f"anchor saved to {save_anchor_to} (seq {report.last_seq})", file=sys.stderr)
    return code
