"""The words of `410 operation_pruned`: an operation that finished long enough ago that
its record was removed (docs/operations.md, "Retention"). Finished vocabulary only: the
work ended, and nothing is started again for its key."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.operations.contract import wording
from app.operations.domain.models import Tombstone

# How each outcome is said, in the finished situation's marker words.
_ENDED: dict[str, str] = {
    "succeeded": f"{wording.HAS_FINISHED} and {wording.SUCCEEDED}",
    "completed_with_errors": f"{wording.HAS_FINISHED} with {wording.PARTIAL}",
    "failed": f"{wording.HAS_FINISHED} and {wording.FAILED}",
    "cancelled": f"{wording.HAS_FINISHED}: it was {wording.CANCELLED}",
}


def _when(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def message(tomb: Tombstone, *, replay: bool, same_request: bool = True) -> str:
    """One paragraph: how it ended and when, that the record is gone, that nothing was
    started, and what to do instead."""
    ended = _ENDED.get(tomb.outcome or "", f"{wording.HAS_FINISHED} ({tomb.outcome or tomb.state})")
    text = (
        f"The {tomb.kind} operation {tomb.operation_id} {ended} on {_when(tomb.finished_at)}; "
        "its record was removed after the retention period, so its result can no longer "
        "be read here."
    )
    if replay:
        text += (
            " Nothing was started: this Idempotency-Key belongs to that operation"
            + ("" if same_request else " (sent then with a different request)")
            + ". Do not send it again; new work needs a new key."
        )
    return text


def details(tomb: Tombstone, *, same_request: bool | None = None) -> dict[str, Any]:
    """The tombstone's facts, as the error's `details`."""
    out: dict[str, Any] = {
        "operation_id": tomb.operation_id,
        "provider": tomb.provider,
        "kind": tomb.kind,
        "state": tomb.state,
        "outcome": tomb.outcome,
        "finished_at": _when(tomb.finished_at),
        "pruned_at": _when(tomb.pruned_at),
    }
    if same_request is not None:
        out["same_request"] = same_request
    return out
