"""The `ops show` timeline folds repeated polls and keeps everything else."""

from __future__ import annotations

from typing import Any

from app.ops_cli import render
from app.ops_cli.timeline import fold
from app.ops_cli.timeline import render as render_timeline


def at(s: int) -> str:
    return f"2026-01-01T00:{s // 60:02d}:{s % 60:02d}Z"


def poll(s: int, code: int, remote: str | None, done: int | None = None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {"at": at(s), "kind": "exchange", "actor": "observer:a", "cause": f"status GET -> {code}",
         "data": {"operation": "status", "status_code": code}},
    ]  # fmt: skip
    if remote is not None:
        obs = {"remote_state": remote, "progress": {"completed": done, "total": 40}}
        rows.append({"at": at(s), "kind": "observation", "actor": "observer:a",
                     "cause": "remote job still running", "data": obs})  # fmt: skip
    return rows


def transition(s: int, a: str | None, b: str) -> dict[str, Any]:
    return {"at": at(s), "kind": "transition", "actor": "observer:a", "from_state": a,
            "to_state": b, "cause": "because"}  # fmt: skip


def test_37_polls_are_one_line_and_a_state_change_starts_another() -> None:
    rows = [transition(0, None, "create_pending"), transition(1, "accepted", "observing")]
    rows += poll(2, 429, None)  # rate limited: no observation
    for i in range(36):
        rows += poll(3 + i, 200, "running", i)
    rows += poll(40, 200, "finalizing", 40)
    rows.append(transition(41, "observing", "result_collecting"))
    entries = fold(rows)
    texts = [e.text for e in entries]
    assert texts == [
        "(new) -> create_pending: because",
        "accepted -> observing: because",
        "polled 37x, running (35/40); answers: 429 x1, 200 x36",
        "polled 1x, finalizing (40/40); answers: 200 x1",
        "observing -> result_collecting: because",
    ]
    assert entries[2].rows == 37 + 36 and entries[2].first_at == at(2)
    lines = render_timeline(entries)
    assert lines[2].startswith("2026-01-01 00:00:02 .. 00:00:38")


def test_other_rows_are_never_folded() -> None:
    rows = [
        {"at": at(0), "kind": "webhook", "actor": "provider", "cause": "job.succeeded"},
        {"at": at(0), "kind": "webhook", "actor": "provider", "cause": "job.succeeded"},
        {
            "at": at(1),
            "kind": "refused",
            "actor": "x",
            "from_state": "failed",
            "to_state": "observing",
            "cause": "not allowed",
        },  # fmt: skip
    ]
    assert [e.text for e in fold(rows)] == [
        "webhook: job.succeeded",
        "webhook: job.succeeded",
        "REFUSED failed -> observing: not allowed",
    ]


def test_tables_align_and_cut_long_cells() -> None:
    out = render.table(("A", "LONGER"), [["x" * 100, None], ["y", "z"]])
    head, first, second = out.splitlines()
    assert head.index("LONGER") == first.index("-") == second.index("z")
    assert first.startswith("x" * 45 + "...")
    assert render.table(("A",), []) == "(none)"
