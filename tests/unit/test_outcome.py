"""The outcome table: nothing failed or left unprocessed is ever success, and partial
output of a job that ended early is kept and offered."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.providers.counts import Counts
from app.providers.outcome import TABLE, ResultClass, markdown_table, outcome
from app.providers.types import RemoteClass as C

R = ResultClass
DOCS = Path(__file__).resolve().parents[2] / "docs" / "profiles.md"


@pytest.mark.parametrize(
    ("remote", "counts", "result", "keep_partial"),
    [
        (C.PENDING, None, None, False),
        (C.RUNNING, Counts(10, 10, 0, 0), None, False),
        (C.SUCCEEDED, None, R.SUCCEEDED, False),
        (C.SUCCEEDED, Counts(10, 10, 0, 0), R.SUCCEEDED, False),
        (C.SUCCEEDED, Counts(10, 9, 1, 0), R.COMPLETED_WITH_ERRORS, True),
        (C.SUCCEEDED, Counts(10, 9, 0, 1), R.COMPLETED_WITH_ERRORS, True),
        (C.SUCCEEDED, Counts(10, 9), R.COMPLETED_WITH_ERRORS, True),  # one unaccounted for
        (C.SUCCEEDED, Counts(10, 12, 0, 0), R.COMPLETED_WITH_ERRORS, True),  # counts disagree
        (C.SUCCEEDED, Counts(total=10), R.COMPLETED_WITH_ERRORS, True),  # succeeded unknown
        (C.SUCCEEDED, Counts(10, 0, 10, 0), R.FAILED, False),
        (C.SUCCEEDED_PARTIAL, None, R.COMPLETED_WITH_ERRORS, True),
        (C.SUCCEEDED_PARTIAL, Counts(100, 60, 0, 40), R.COMPLETED_WITH_ERRORS, True),  # expired
        (C.SUCCEEDED_PARTIAL, Counts(100, 0, 7, 93), R.FAILED, False),
        (C.FAILED, None, R.FAILED, False),
        (C.FAILED, Counts(10, 4, 6, 0), R.FAILED, True),
        (C.CANCELLED, Counts(100, 60, 0, 40), R.CANCELLED, True),
        (C.CANCELLED, Counts(100, 0, 0, 100), R.CANCELLED, False),
        (C.CANCELLED, None, R.CANCELLED, False),
    ],
)
def test_the_table(remote: C, counts: Counts | None, result: R | None, keep_partial: bool) -> None:
    verdict = outcome(remote, counts)
    assert (verdict.result, verdict.keep_partial) == (result, keep_partial)
    assert verdict.may_report_success is (result is R.SUCCEEDED)
    assert verdict.reason


def test_failed_items_are_collected_even_when_the_job_failed() -> None:
    assert outcome(C.FAILED, Counts(3, 0, 3, 0)).collect
    assert outcome(C.SUCCEEDED, Counts(3, 0, 3, 0)).collect
    assert not outcome(C.FAILED, None).collect
    assert not outcome(C.RUNNING, None).collect


def test_only_every_item_succeeded_may_be_reported_as_success() -> None:
    for remote in C:
        for counts in (None, Counts(5, 4, 1, 0), Counts(5, 4, 0, 1), Counts(5, 0, 5, 0)):
            verdict = outcome(remote, counts)
            if verdict.may_report_success:
                assert remote is C.SUCCEEDED and counts is None


def test_every_remote_class_has_a_row() -> None:
    covered = {r for row in TABLE for r in row.remote}
    assert covered == set(C)


def test_the_docs_show_the_table_the_code_uses() -> None:
    assert markdown_table() in DOCS.read_text(encoding="utf-8")
