"""Top functions by self and cumulative samples in a py-spy `--format raw` (folded) profile.

    .venv/bin/python bench/folded_top.py PROFILE.folded [--top 10] [--by function|line]

Frames are grouped by function and file (line numbers dropped) unless `--by line`.
Cumulative counts a function once per sample, however deep it recurses; it is
listed twice: over every frame, and over jobgate's own code (`app/`) only. Last, every
sample goes to one part of the gateway (`PARTS`) by its deepest frame that names one.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>.*?)(?::(?P<line>\d+))?\)$")
_SITE = re.compile(r"^.*?/(site-packages|lib/python3\.\d+)/")


def frame_name(frame: str, by_line: bool) -> str:
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    path = _SITE.sub("", m["file"]).replace(str(Path.cwd()) + "/", "")
    line = f":{m['line']}" if by_line and m["line"] else ""
    return f"{m['func']} ({path}{line})"


Ranking = list[tuple[str, int]]

# The parts of the gateway's work, by the files their frames name; the first that
# matches a frame wins, and a sample goes to the part of its deepest matching frame.
PARTS = (
    (
        "provider calls",
        r"httpx2?/|httpcore2?/|h11/|anyio/|app/providers/calls/",
    ),
    (
        "database",
        r"sqlalchemy/|asyncpg/|sqlite3|app/core/db/|operations/(repository/|ledger)|app/audit/",
    ),
    ("models", r"sqlmodel/|_new_operation"),
    ("inbound requests", r"uvicorn/|starlette/|fastapi/|app/core/http/"),
    ("pydantic", r"pydantic"),
)


def part_of(frames: list[str], rules: list[tuple[str, re.Pattern[str]]]) -> str:
    """The part of `PARTS` named by the deepest frame that names one, else "other"."""
    for frame in reversed(frames):
        for name, rx in rules:
            if rx.search(frame):
                return name
    return "other"


def top(
    path: Path, n: int, by_line: bool = False
) -> tuple[int, Ranking, Ranking, Ranking, Ranking]:
    """(total samples, top self, top cumulative, top cumulative within app/, samples per
    part of `PARTS`, largest first)."""
    rules = [(name, re.compile(rx)) for name, rx in PARTS]
    self_c: Counter[str] = Counter()
    cum_c: Counter[str] = Counter()
    part_c: Counter[str] = Counter()
    total = 0
    for raw in path.read_text().splitlines():
        stack, _, count = raw.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        k = int(count)
        frames = [frame_name(f, by_line) for f in stack.split(";") if f.strip()]
        frames = [f for f in frames if not f.startswith("process ") and not f.startswith("thread ")]
        if not frames:
            continue
        total += k
        self_c[frames[-1]] += k
        for f in set(frames):
            cum_c[f] += k
        part_c[part_of(frames, rules)] += k
    own = Counter({f: c for f, c in cum_c.items() if "(app/" in f})
    return (
        total,
        self_c.most_common(n),
        cum_c.most_common(n),
        own.most_common(n),
        part_c.most_common(),
    )


def report(path: Path, n: int = 10, by_line: bool = False) -> str:
    total, self_top, cum_top, own_top, by_part = top(path, n, by_line)
    lines = [f"{path.name}: {total} samples"]
    for title, rows in (
        (f"top {n} by self", self_top),
        (f"top {n} by cumulative", cum_top),
        (f"top {n} by cumulative, jobgate code", own_top),
        ("by part (the deepest frame that names one)", by_part),
    ):
        lines.append(f"  {title}:")
        lines += [f"    {c / total * 100:5.1f}%  {name}" for name, c in rows] if total else []
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile", type=Path)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--by", choices=("function", "line"), default="function")
    args = ap.parse_args()
    print(report(args.profile, args.top, args.by == "line"))


if __name__ == "__main__":
    main()
