"""The outcome table: nothing failed, left unprocessed or uncounted is ever success, and
partial output of a job that ended early is kept and offered."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.providers.answers.outcome import TABLE, Facts, ResultClass, judge, markdown_table, outcome
from app.providers.language.counts import Counts
from app.providers.language.words import RemoteClass as C

R = ResultClass
DOCS = Path(__file__).resolve().parents[2] / "docs" / "profiles.md"


@pytest.mark.parametrize(
    ("remote", "counts", "itemless", "result", "keep_partial"),
    [
        (C.PENDING, None, False, None, False),
        (C.RUNNING, Counts(10, 10, 0, 0), False, None, False),
        (C.SUCCEEDED, None, True, R.SUCCEEDED, False),  # one piece of work
        (C.SUCCEEDED, None, False, R.COMPLETED_WITH_ERRORS, True),  # counts unreadable
        (C.SUCCEEDED, Counts(10, 10, 0, 0), False, R.SUCCEEDED, False),
        (C.SUCCEEDED, Counts(10, 9, 1, 0), False, R.COMPLETED_WITH_ERRORS, True),
        (C.SUCCEEDED, Counts(10, 9, 0, 1), False, R.COMPLETED_WITH_ERRORS, True),
        (C.SUCCEEDED, Counts(10, 9), False, R.COMPLETED_WITH_ERRORS, True),  # one unaccounted
        (C.SUCCEEDED, Counts(10, 12, 0, 0), False, R.COMPLETED_WITH_ERRORS, True),  # disagree
        (C.SUCCEEDED, Counts(total=10), False, R.COMPLETED_WITH_ERRORS, True),  # no succeeded
        (C.SUCCEEDED, Counts(10, 0, 10, 0), False, R.FAILED, False),
        (C.SUCCEEDED, Counts(0, 0, 0, 0), False, R.FAILED, False),  # nothing counted
        (C.SUCCEEDED, Counts(0, 0, 0, 0), True, R.FAILED, False),
        (C.SUCCEEDED_PARTIAL, None, False, R.COMPLETED_WITH_ERRORS, True),
        (C.SUCCEEDED_PARTIAL, None, True, R.COMPLETED_WITH_ERRORS, True),  # never success
        (C.SUCCEEDED_PARTIAL, Counts(0, 0, 0, 0), False, R.FAILED, False),
        (C.SUCCEEDED_PARTIAL, Counts(100, 60, 0, 40), False, R.COMPLETED_WITH_ERRORS, True),
        (C.SUCCEEDED_PARTIAL, Counts(100, 0, 7, 93), False, R.FAILED, False),
        (C.FAILED, None, False, R.FAILED, False),
        (C.FAILED, Counts(10, 4, 6, 0), False, R.FAILED, True),
        (C.CANCELLED, Counts(100, 60, 0, 40), False, R.CANCELLED, True),
        (C.CANCELLED, Counts(100, 0, 0, 100), False, R.CANCELLED, False),
        (C.CANCELLED, None, False, R.CANCELLED, False),
    ],
)
def test_the_table(
    remote: C, counts: Counts | None, itemless: bool, result: R | None, keep_partial: bool
) -> None:
    verdict = outcome(remote, counts, itemless=itemless)
    assert (verdict.result, verdict.keep_partial) == (result, keep_partial)
    assert verdict.may_report_success is (result is R.SUCCEEDED)
    assert verdict.reason


@pytest.mark.parametrize(
    ("counts", "listed", "result", "failed"),
    [
        (None, 3, R.COMPLETED_WITH_ERRORS, 3),  # no counts, three failures listed
        (Counts(10, 10, 0, 0), 2, R.COMPLETED_WITH_ERRORS, 2),  # counts deny what is listed
        (Counts(10, 8, 2, 0), 2, R.COMPLETED_WITH_ERRORS, 2),  # listed = counted
        (Counts(100, 60, 0, 40), 40, R.COMPLETED_WITH_ERRORS, 0),  # expired lines listed
        (Counts(3, 0, 3, 0), 3, R.FAILED, 3),
    ],
)
def test_listed_items_count_as_not_succeeded(
    counts: Counts | None, listed: int, result: R, failed: int
) -> None:
    verdict = judge(Facts(C.SUCCEEDED, counts, listed, itemless=counts is None))
    assert verdict.result is result
    assert verdict.counts is not None and (verdict.counts.failed or 0) == failed


def test_failed_items_are_collected_even_when_the_job_failed() -> None:
    assert outcome(C.FAILED, Counts(3, 0, 3, 0)).collect
    assert outcome(C.SUCCEEDED, Counts(3, 0, 3, 0)).collect
    assert not outcome(C.FAILED, None).collect
    assert not outcome(C.RUNNING, None).collect


def test_every_success_class_collects_before_it_decides() -> None:
    for itemless in (True, False):
        for counts in (None, Counts(0, 0, 0, 0), Counts(5, 5, 0, 0), Counts(5, 4, 1, 0)):
            for remote in (C.SUCCEEDED, C.SUCCEEDED_PARTIAL):
                assert outcome(remote, counts, itemless=itemless).collect


def test_only_every_item_succeeded_or_an_itemless_job_may_be_reported_as_success() -> None:
    for remote in C:
        for itemless in (True, False):
            for counts in (
                None,
                Counts(0, 0, 0, 0),
                Counts(5, 4, 1, 0),
                Counts(5, 4, 0, 1),
                Counts(5, 0, 5, 0),
                Counts(5, 5, 0, 0),
            ):
                for listed in (0, 1):
                    verdict = judge(Facts(remote, counts, listed, itemless))
                    if not verdict.may_report_success:
                        continue
                    assert remote is C.SUCCEEDED and listed == 0
                    assert (counts is None and itemless) or counts == Counts(5, 5, 0, 0)


def test_every_remote_class_has_a_row() -> None:
    covered = {r for row in TABLE for r in row.remote}
    assert covered == set(C)


def test_the_docs_show_the_table_the_code_uses() -> None:
    assert markdown_table() in DOCS.read_text(encoding="utf-8")
