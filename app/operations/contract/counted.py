"""What an operation's counts say: how many items it processed, how many failed, how
many of those `/errors` lists, and the words for them (docs/agent-api.md, "Counts and
/errors"). The presenter (presenter.py) builds bodies and messages from these.
"""

from __future__ import annotations

from app.operations.contract import wording as W
from app.operations.domain.operation import Operation
from app.operations.domain.states import AgentStatus, State


def summary_count(op: Operation, name: str) -> int:
    """One count of `result_summary` (0 when absent)."""
    summary = op.result_summary if isinstance(op.result_summary, dict) else {}
    return int(summary.get(name) or 0)


def has_output(op: Operation) -> bool:
    """A stored result (inline or in the result store): a success's, or the part a job that
    ended early (cancelled, failed) finished first."""
    return op.result is not None or op.result_ref is not None


def failed_with_output(op: Operation) -> bool:
    """A failed job's kept partial output: stored, and some items succeeded (a row from
    before no-success output was dropped may hold an empty output: nothing to offer)."""
    return op.state == State.FAILED and has_output(op) and summary_count(op, "succeeded") > 0


def kept_items(op: Operation) -> int:
    """How many items a kept output holds: counted in it when it is stored inline as a
    list (so the words match `GET /result`), else the provider's count of those done."""
    if isinstance(op.result, list):
        return len(op.result)
    return summary_count(op, "succeeded")


def items_were(n: int) -> str:
    return "1 item was" if n == 1 else f"{n} items were"


def n_items(n: int) -> str:
    return "1 item" if n == 1 else f"{n} items"


def with_errors(op: Operation) -> bool:
    """A `succeeded` row the outcome table called `completed_with_errors` (or, on a row
    older than that verdict's column, one whose counts show items that did not succeed)."""
    if op.outcome is not None:
        return op.outcome == AgentStatus.COMPLETED_WITH_ERRORS.value
    return not_succeeded(op) > 0


def not_succeeded(op: Operation) -> int:
    """Items that did not succeed: those that ran and failed, and those never processed."""
    return summary_count(op, "failed") + summary_count(op, "not_processed")


def unit_of(op: Operation) -> str:
    """What the counts count: `items`, or the unit the profile names (`characters`)."""
    summary = op.result_summary if isinstance(op.result_summary, dict) else {}
    unit = summary.get("unit")
    return unit if isinstance(unit, str) and unit else "items"


def counted_words(n: int, unit: str) -> str:
    if unit == "items":
        return n_items(n)
    return f"{n} {unit}"


def not_succeeded_words(op: Operation) -> str:
    """What did not get done, in failure words only (never a count of what did)."""
    failed, never = summary_count(op, "failed"), summary_count(op, "not_processed")
    unit = unit_of(op)
    if not failed and not never:  # the outcome table's verdict without counts
        return f"the provider reports that some {unit} {W.FAILED}, without counting them"
    total = summary_count(op, "processed")
    of = f" of {total}" if total else ""
    if unit != "items":
        parts = [f"{failed}{of} {unit} {W.FAILED}"] if failed else []
        if never:
            parts.append(f"{counted_words(never, unit)} were never processed")
        return " and ".join(parts)
    parts = [f"{n_items(failed)}{of} {W.FAILED}"] if failed else []
    if never:
        parts.append(
            f"{items_were(never)} never processed (the job {W.EXPIRED} or was "
            f"{W.CANCELLED} before {'it' if never == 1 else 'they'} ran)"
        )
    return " and ".join(parts)


def listed_errors(op: Operation) -> int:
    """How many failed items `GET /errors` lists (0: none, whatever the counts say)."""
    return int(op.errors_listed or 0)


def unlisted_words(op: Operation) -> str:
    """Why a count is not backed by `/errors`, in words that name its unit."""
    unit = unit_of(op)
    if unit != "items":
        return f"the provider counts {unit}, not items, and lists no failed ones"
    return "the provider lists no failed items, so no per-item list exists"


def has_errors(op: Operation) -> bool:
    return listed_errors(op) > 0
