"""An operation's history as a timeline a person can read: repeated polls folded into one line.

A job polled 37 times shows as `polled 37x, running` (with the answers it got and the
progress last seen), not 74 rows of status exchanges and observations; polls the gateway
did not write one by one (they changed nothing: one history row counts them,
`unchanged_polls`) are counted in the same line, as answered `2xx`. Everything
else (transitions, the create and result calls, webhooks, decisions, refusals) keeps
its own line. Pure: history rows (dicts, as the REST API returns them) in, lines out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Entry:
    """One line of the timeline: a single row, or a run of folded polls."""

    first_at: str
    last_at: str
    text: str
    actor: str = ""
    rows: int = 1


@dataclass
class _PollRun:
    first_at: str
    last_at: str = ""
    polls: int = 0
    observations: int = 0
    answers: Counter[str] = field(default_factory=Counter)
    remote_state: str | None = None
    progress: str | None = None
    actor: str = ""
    rows: int = 0

    # (at, answer, last_at before it) while the newest row is a status read
    last_read: tuple[str, str, str] | None = None

    def count_read(self, at: str, answer: str) -> None:
        self.polls += 1
        self.rows += 1
        self.answers[answer] += 1
        self.last_read = (at, answer, self.last_at)
        self.last_at = at

    def pop_last_read(self) -> tuple[str, str] | None:
        """Take back the read just counted, if the newest row was one."""
        read, self.last_read = self.last_read, None
        if read is None:
            return None
        at, answer, before = read
        self.polls -= 1
        self.rows -= 1
        self.last_at = before
        self.answers[answer] -= 1
        if not self.answers[answer]:
            del self.answers[answer]
        return at, answer

    def entry(self) -> Entry:
        count = self.polls or self.observations
        text = f"polled {count}x, {self.remote_state or 'no state read'}"
        if self.progress:
            text += f" ({self.progress})"
        if self.answers:
            text += "; answers: " + ", ".join(f"{a} x{n}" for a, n in self.answers.items())
        return Entry(self.first_at, self.last_at, text, self.actor, self.rows)


def _data(row: dict[str, Any]) -> dict[str, Any]:
    raw = row.get("data")
    return raw if isinstance(raw, dict) else {}


def _is_poll(row: dict[str, Any]) -> bool:
    """A status read (the exchange) or what it showed (the observation)."""
    if row.get("kind") == "observation":
        return True
    return row.get("kind") == "exchange" and _data(row).get("operation") == "status"


def _progress(obs: dict[str, Any]) -> str | None:
    p = obs.get("progress")
    if isinstance(p, dict) and p.get("completed") is not None:
        total = p.get("total")
        return f"{p['completed']}/{total}" if total is not None else f"{p['completed']} done"
    return None


def _describe(row: dict[str, Any]) -> str:
    kind = row.get("kind", "")
    cause = row.get("cause", "")
    if kind == "transition":
        return f"{row.get('from_state') or '(new)'} -> {row.get('to_state')}: {cause}"
    if kind == "refused":
        return f"REFUSED {row.get('from_state')} -> {row.get('to_state')}: {cause}"
    return f"{kind}: {cause}"


def fold(rows: list[dict[str, Any]]) -> list[Entry]:
    """The timeline: consecutive polls that saw the same remote state become one entry."""
    out: list[Entry] = []
    run: _PollRun | None = None

    def close() -> None:
        nonlocal run
        if run is not None:
            out.append(run.entry())
            run = None

    for row in rows:
        at = str(row.get("at", ""))
        if not _is_poll(row):
            close()
            out.append(Entry(at, at, _describe(row), str(row.get("actor", ""))))
            continue
        data = _data(row)
        seen = data.get("remote_state") if row.get("kind") == "observation" else None
        carried: tuple[str, str] | None = None
        if run is not None and seen is not None and run.remote_state not in (None, seen):
            # The remote state changed: a new run, which takes along the status read
            # that showed the change (it came just before this observation).
            carried = run.pop_last_read()
            close()
        if run is None:
            run = _PollRun(first_at=carried[0] if carried else at, actor=str(row.get("actor", "")))
            if carried:
                run.count_read(carried[0], carried[1])
        if row.get("kind") == "exchange":
            code = data.get("status_code")
            run.count_read(at, str(code) if code is not None else "no answer")
        else:
            run.last_at = at
            run.rows += 1
            run.last_read = None
            run.observations += 1
            unchanged = data.get("unchanged_polls")
            if isinstance(unchanged, int) and unchanged > 0:  # polls counted, not written
                run.polls += unchanged
                run.answers["2xx"] += unchanged
                run.observations += unchanged - 1
                run.last_at = str(data.get("last_at") or at)
            run.remote_state = seen if isinstance(seen, str) else run.remote_state
            run.progress = _progress(data) or run.progress
    close()
    return out


def render(entries: list[Entry]) -> list[str]:
    """Fixed-width lines: when (a range for a folded run), what, who."""
    lines = []
    for e in entries:
        when = _short(e.first_at)
        if e.last_at and e.last_at != e.first_at:
            when += " .. " + _short(e.last_at).split(" ")[-1]
        who = f"  [{e.actor}]" if e.actor else ""
        lines.append(f"{when:<32} {e.text}{who}")
    return lines


def _short(at: str) -> str:
    """`2026-01-01T00:00:05.123Z` as `2026-01-01 00:00:05`."""
    return at.replace("T", " ")[:19]
