"""The repository stands on its own: code, tests and docs cite the doc in docs/ that says
a thing, never a brief or a tracker a user's clone does not hold."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ["app", "jobgate_client", "jobgate_fakes", "tests", "docs", "bench", "alembic"]
# Words may be split across a line break (a docstring, a wrapped paragraph): files are
# read whole, and any run of white space between the words counts.
OUTSIDE = re.compile(
    r"\bSPEC\b\s*(?:section|§|[0-9H])|\bissues?\s+#?[0-9]+\b|\bstop\s+[0-9]+\b", re.I
)


def sources() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "Makefile", ROOT / "pyproject.toml"]
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".md", ".yaml", ".toml", ".html"} and path != Path(__file__):
                found.append(path)
    return found


def test_nothing_cites_a_document_outside_the_repository() -> None:
    hits = []
    for path in sources():
        text = path.read_text(errors="replace")
        for found in OUTSIDE.finditer(text):
            number = text.count("\n", 0, found.start()) + 1
            hits.append(f"{path.relative_to(ROOT)}:{number}: {' '.join(found.group().split())}")
    assert not hits, "\n".join(hits)


def test_the_pattern_catches_what_it_is_for() -> None:
    # Written in two halves, so this file does not cite what it forbids.
    brief, tracker = "SP" + "EC", "iss" + "ue"
    split = f"(an {tracker}\n   11, measured)"  # across a line break
    for text in (f"see {brief} section 3", f"({brief} 1.10)", f"{tracker} 11's figures",
                 f"{tracker.title()} #8", "stop 22", split):  # fmt: skip
        assert OUTSIDE.search(text), text
    for text in ("the spec of tasks", "an issue with", "a SPECIAL case", "stops 2 polls"):
        assert not OUTSIDE.search(text), text
