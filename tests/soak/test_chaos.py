"""The chaos soak: a short run in CI, the long one with --run-slow."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import IS_POSTGRES
from tests.soak.chaos import run_soak


def _assert_clean(line: str, figures: object) -> None:
    print(line)
    for name in (
        "duplicates",
        "lost",
        "bad_histories",
        "changed_history_rows",
        "secret_leaks",
        "wrong_outcomes",
    ):
        assert getattr(figures, name) == 0, line


@pytest.mark.timeout(600)
def test_chaos_soak_short(database_url: str, tmp_path: Path) -> None:
    figures = run_soak(
        database_url, tmp_path, operations=150, kills=5, observers=2 if IS_POSTGRES else 1
    )
    assert figures.operations >= 150 and figures.kills >= 5
    _assert_clean(figures.line(), figures)


@pytest.mark.slow
@pytest.mark.timeout(7200)
def test_chaos_soak_long(database_url: str, tmp_path: Path) -> None:
    figures = run_soak(
        database_url, tmp_path, operations=10_000, kills=50, observers=2 if IS_POSTGRES else 1
    )
    _assert_clean(figures.line(), figures)
