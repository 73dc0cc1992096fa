"""Every repository path that README.md and docs/ name exists: a renamed or deleted file
fails here instead of leaving a newcomer at a dead end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
TOP = r"(?:app|tests|bench|docs|alembic|jobgate_client|jobgate_fakes|openapi|\.ci)"
# A path starts at a top-level folder and runs over path characters; globs are allowed.
PATH = re.compile(rf"(?<![\w./-]){TOP}/[\w./*-]*[\w*]")
# A markdown link to a relative file: [text](target) or [text](target#anchor).
LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)#\s]+)(?:#[^)]*)?\)")


def named(doc: Path) -> list[tuple[str, Path]]:
    text = doc.read_text()
    found = [(m, ROOT / m) for m in PATH.findall(text)]
    found += [(m, (doc.parent / m).resolve()) for m in LINK.findall(text)]
    return found


def exists(path: Path) -> bool:
    if "*" in str(path):
        return any(ROOT.glob(str(path.relative_to(ROOT))))
    return path.exists()


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_path_a_doc_names_exists(doc: Path) -> None:
    missing = sorted({name for name, path in named(doc) if not exists(path)})
    assert not missing, f"{doc.relative_to(ROOT)} names paths that do not exist: {missing}"


def test_the_check_sees_paths() -> None:
    """The pattern finds what the docs write (so an empty match cannot pass silently)."""
    text = "see `app/core/config.py` and [x](docs/agent-api.md#errors), app/*/models.py."
    assert PATH.findall(text) == ["app/core/config.py", "docs/agent-api.md", "app/*/models.py"]
    assert LINK.findall(text) == ["docs/agent-api.md"]
