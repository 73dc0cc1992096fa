"""The six typed outcomes of `start_and_wait`, and the one rule that derives an outcome.

Exactly one of `Succeeded`, `CompletedWithErrors`, `Failed`, `Cancelled`,
`NeedsAttention` or `StillRunning` comes back; each carries the gateway's
plain-words `message` and the operation body it rests on. Match on the class (or on
`.kind`, the same word as the body's `outcome`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from jobgate_client.types import DONE_OUTCOMES, ErrorInfo, FailedItem, JsonValue, Operation


def outcome_of(body: Operation) -> str | None:
    """The body's outcome: `outcome` when the gateway filled it (contract v2), else
    derived from `done` and `status` (an older gateway fills it only on /wait).

    None while the operation is not done; `timed_out` never comes from here (it only
    says how a wait ended, which the caller knows)."""
    if not body.get("done"):
        return None
    stated = body.get("outcome")
    if stated in DONE_OUTCOMES:
        return stated
    status = body.get("status")
    if status in DONE_OUTCOMES:
        return status
    return "needs_attention"  # done with a status this client does not know: ask a human


def with_outcome(body: Operation, *, waited: bool = False) -> Operation:
    """The body with `outcome` filled as contract v2 states it (a copy; `timed_out`
    when `waited` and not done)."""
    out: dict[str, Any] = dict(body)
    derived = outcome_of(body)
    out["outcome"] = derived if derived is not None else ("timed_out" if waited else None)
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class _Outcome:
    operation_id: str
    message: str  # the gateway's plain words: what is finished and what to do next
    operation: Operation = field(repr=False)


@dataclass(frozen=True)
class Succeeded(_Outcome):
    """Finished; the result was collected and checked. `result` is None only when it is
    too large to come inline and could not be fetched (then call `result(op_id)`)."""

    kind: ClassVar[Literal["succeeded"]] = "succeeded"
    result: JsonValue = field(default=None, repr=False)


@dataclass(frozen=True)
class CompletedWithErrors(_Outcome):
    """Finished, but some items failed: report the failures too. `failed_items` is the
    first bounded page; `more_failed_items` says whether there are more."""

    kind: ClassVar[Literal["completed_with_errors"]] = "completed_with_errors"
    result: JsonValue = field(default=None, repr=False)
    result_summary: dict[str, Any] | None = None
    failed_items: list[FailedItem] = field(default_factory=list, repr=False)
    more_failed_items: bool = False


@dataclass(frozen=True)
class Failed(_Outcome):
    """Finished and failed; `error` says why. Do not report success."""

    kind: ClassVar[Literal["failed"]] = "failed"
    error: ErrorInfo | None = None


@dataclass(frozen=True)
class Cancelled(_Outcome):
    """Cancelled, and the provider confirmed it."""

    kind: ClassVar[Literal["cancelled"]] = "cancelled"


@dataclass(frozen=True)
class NeedsAttention(_Outcome):
    """Stopped and waiting for a human: tell the user, do not start the work again."""

    kind: ClassVar[Literal["needs_attention"]] = "needs_attention"
    error: ErrorInfo | None = None


@dataclass(frozen=True)
class StillRunning(_Outcome):
    """NOT finished when `max_wait` ran out (`reason="max_wait"`) or when the gateway
    stopped answering (`reason="gateway_unreachable"`): the job goes on in the gateway.
    Check later with `wait(operation_id, ...)`; never report success."""

    kind: ClassVar[Literal["still_running"]] = "still_running"
    reason: Literal["max_wait", "gateway_unreachable"] = "max_wait"


Outcome = Succeeded | CompletedWithErrors | Failed | Cancelled | NeedsAttention | StillRunning


def still_running(
    op: Operation, reason: Literal["max_wait", "gateway_unreachable"]
) -> StillRunning:
    """StillRunning with words that say the job continues and how to check on it."""
    oid = op["operation_id"]
    why = (
        "the wait budget (max_wait) ran out"
        if reason == "max_wait"
        else "the gateway stopped answering"
    )
    message = (
        f"Operation {oid} is NOT finished: {why}, and the job continues in the background. "
        f"Do not report success. Check later with wait({oid!r}) or "
        f"GET /v1/operations/{oid}/wait. Gateway said: {op.get('message', '')}"
    )
    return StillRunning(operation_id=oid, message=message, operation=op, reason=reason)


def done_outcome(
    op: Operation,
    *,
    result: JsonValue = None,
    failed_items: list[FailedItem] | None = None,
    more_failed_items: bool = False,
) -> Outcome:
    """The typed outcome of a done body (the caller has fetched what it needs)."""
    name = outcome_of(op)
    common: dict[str, Any] = {
        "operation_id": op["operation_id"],
        "message": op.get("message", ""),
        "operation": op,
    }
    if name == "succeeded":
        return Succeeded(result=result, **common)
    if name == "completed_with_errors":
        return CompletedWithErrors(
            result=result,
            result_summary=op.get("result_summary"),
            failed_items=failed_items or [],
            more_failed_items=more_failed_items,
            **common,
        )
    if name == "failed":
        return Failed(error=op.get("error"), **common)
    if name == "cancelled":
        return Cancelled(**common)
    if name == "needs_attention":
        return NeedsAttention(error=op.get("error"), **common)
    raise ValueError(f"operation {op['operation_id']} is not done")  # a bug in the caller
