"""The outcome table: (remote class, item counts) -> what the operation's result is.

One pure table, read top to bottom, first matching row wins. It is the whole rule for
"may an agent report success?": only ``succeeded`` may, and only when every item the
provider knew of succeeded. Items that failed or were never processed (expired,
cancelled) make a result ``completed_with_errors`` at best; ``result_summary`` counts
them apart (``failed`` ran and failed, ``not_processed`` never ran). A job that ended
(cancelled, expired, failed) with some items done keeps that partial output and offers it.
docs/profiles.md shows the same table (a unit test keeps them equal).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from app.providers.counts import Counts
from app.providers.types import RemoteClass


class ResultClass(StrEnum):
    """The local result of a finished remote job (the agent's ``outcome``)."""

    SUCCEEDED = "succeeded"  # every item succeeded: the agent may report success
    COMPLETED_WITH_ERRORS = "completed_with_errors"  # some items failed or never ran
    FAILED = "failed"  # nothing usable: the job failed, or no item succeeded
    CANCELLED = "cancelled"  # the provider confirmed a cancellation


@dataclass(frozen=True)
class Verdict:
    """What to do with a remote job in this remote class with these counts."""

    result: ResultClass | None  # None: not finished, keep watching
    collect: bool  # fetch the result documents (output and errors) before finishing
    keep_partial: bool  # partial output exists: store it and offer it, never drop it
    reason: str

    @property
    def may_report_success(self) -> bool:
        return self.result is ResultClass.SUCCEEDED


def _all_succeeded(c: Counts | None) -> bool:
    # Known counts, none failed, none left unprocessed, none unaccounted for.
    if c is None or c.succeeded is None:
        return False
    rest = (c.failed or 0) + (c.not_processed or 0)
    return rest == 0 and (c.unaccounted() in (None, 0))


def _none_succeeded(c: Counts | None) -> bool:
    return c is not None and c.succeeded == 0 and (c.total or 0) + (c.failed or 0) > 0


def _some_succeeded(c: Counts | None) -> bool:
    return c is not None and (c.succeeded or 0) > 0


def _some_failed(c: Counts | None) -> bool:
    return c is not None and (c.failed or 0) > 0


def _some_not_processed(c: Counts | None) -> bool:
    # Items that never ran (expired, cancelled), and items no count accounts for.
    return c is not None and ((c.not_processed or 0) > 0 or (c.unaccounted() or 0) > 0)


def _no_counts(c: Counts | None) -> bool:
    return c is None or not c.known()


def _any(c: Counts | None) -> bool:
    return True


CONDITIONS: dict[str, tuple[Callable[[Counts | None], bool], str]] = {
    "any": (_any, "any counts"),
    "no_counts": (_no_counts, "the provider gives no item counts"),
    "all_succeeded": (_all_succeeded, "every item succeeded (none failed, none left)"),
    "none_succeeded": (_none_succeeded, "items exist and none succeeded"),
    "some_succeeded": (_some_succeeded, "at least one item succeeded"),
    "some_failed": (_some_failed, "at least one item failed"),
    "some_not_processed": (_some_not_processed, "at least one item never ran (`not_processed`)"),
}

R = ResultClass
_RUNNING = (RemoteClass.PENDING, RemoteClass.RUNNING)
_DONE_OK = (RemoteClass.SUCCEEDED, RemoteClass.SUCCEEDED_PARTIAL)


@dataclass(frozen=True)
class Row:
    remote: tuple[RemoteClass, ...]
    when: str  # a key of CONDITIONS
    result: ResultClass | None
    collect: bool
    keep_partial: bool
    reason: str


TABLE: tuple[Row, ...] = (
    Row(_RUNNING, "any", None, False, False, "not finished: keep watching"),
    Row((RemoteClass.SUCCEEDED,), "no_counts", R.SUCCEEDED, True, False,
        "the provider says done and counts nothing: success once collected and checked"),
    Row(_DONE_OK, "all_succeeded", R.SUCCEEDED, True, False,
        "every item succeeded: success once collected and checked"),
    Row(_DONE_OK, "none_succeeded", R.FAILED, True, False,
        "no item succeeded (each failed or never ran): failed; items collected for /errors"),
    Row(_DONE_OK, "some_not_processed", R.COMPLETED_WITH_ERRORS, True, True,
        "some items never ran (`not_processed`): the rest is kept and offered, never success"),
    Row(_DONE_OK, "any", R.COMPLETED_WITH_ERRORS, True, True,
        "some items failed, or the counts disagree: the rest is kept and offered, never success"),
    Row((RemoteClass.FAILED,), "some_succeeded", R.FAILED, True, True,
        "the job failed after some items succeeded: failed, partial output kept and offered"),
    Row((RemoteClass.FAILED,), "some_failed", R.FAILED, True, False,
        "the job failed: failed; the failed items are collected for /errors"),
    Row((RemoteClass.FAILED,), "any", R.FAILED, False, False, "the job failed"),
    Row((RemoteClass.CANCELLED,), "some_succeeded", R.CANCELLED, True, True,
        "cancelled after some items succeeded: the partial output is kept and offered"),
    Row((RemoteClass.CANCELLED,), "any", R.CANCELLED, False, False,
        "cancelled before any item succeeded"),
)  # fmt: skip


def outcome(remote: RemoteClass, counts: Counts | None) -> Verdict:
    """The verdict for a remote job: the first row of `TABLE` that matches."""
    for row in TABLE:
        if remote in row.remote and CONDITIONS[row.when][0](counts):
            return Verdict(row.result, row.collect, row.keep_partial, row.reason)
    raise AssertionError(f"the outcome table has no row for {remote}")  # the last rows match all


def markdown_table() -> str:
    """`TABLE` as the Markdown table docs/profiles.md shows."""
    lines = [
        "| remote class | counts | result | collect | partial output | why |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in TABLE:
        remote = ", ".join(f"`{r.value}`" for r in row.remote)
        result = f"`{row.result.value}`" if row.result else "(not finished)"
        lines.append(
            f"| {remote} | {CONDITIONS[row.when][1]} | {result} | "
            f"{'yes' if row.collect else 'no'} | {'kept, offered' if row.keep_partial else '-'} "
            f"| {row.reason} |"
        )
    return "\n".join(lines)
