"""Tables and summaries for `jobgate ops`: plain text, fixed columns, no colour codes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MAX_CELL = 48  # a long message or id is cut, the table stays readable


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligned columns, two spaces apart; an empty table says so."""
    if not rows:
        return "(none)"
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for r in cells:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines)


def _cell(value: Any) -> str:
    text = "-" if value is None or value == "" else str(value)
    text = " ".join(text.split())  # no newlines inside a cell
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 3] + "..."


def progress(op: Mapping[str, Any]) -> str:
    p = op.get("progress") or {}
    done, total = p.get("completed"), p.get("total")
    if done is None:
        return "-"
    return f"{done}/{total}" if total is not None else str(done)


def when(at: str | None) -> str:
    return (at or "").replace("T", " ")[:19] or "-"


OP_HEADERS = ("OPERATION", "STATUS", "STATE", "PROVIDER/KIND", "PROGRESS", "UPDATED (UTC)")


def op_row(op: Mapping[str, Any]) -> list[Any]:
    return [
        op.get("operation_id"),
        op.get("status"),
        op.get("state"),
        f"{op.get('provider')}/{op.get('kind')}",
        progress(op),
        when(op.get("updated_at")),
    ]


def summary(op: Mapping[str, Any]) -> str:
    """`show`'s header: what it is, where it stands, what the gateway says about it."""
    deadlines = op.get("deadlines") or {}
    error = op.get("error") or {}
    fields = [
        ("operation", op.get("operation_id")),
        ("status", f"{op.get('status')} (state {op.get('state')}, done: {op.get('done')})"),
        ("provider", f"{op.get('provider')} / {op.get('kind')}"),
        ("remote job", f"{op.get('remote_job_id') or '-'} ({op.get('remote_state') or '-'})"),
        ("progress", progress(op)),
        ("trace id", op.get("trace_id")),
        ("created", when(op.get("created_at"))),
        ("updated", when(op.get("updated_at"))),
        ("deadlines", ", ".join(f"{k} {when(v)}" for k, v in deadlines.items() if v) or "-"),
    ]
    if error:
        fields.append(("error", f"{error.get('code')}: {error.get('message')}"))
    fields.append(("message", op.get("message")))
    width = max(len(k) for k, _ in fields)
    return "\n".join(f"{k.ljust(width)}  {v if v is not None else '-'}" for k, v in fields)
