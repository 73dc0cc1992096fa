"""What a `503`/`507` says: only what is known of the call that met the fault.

An agent acts on these words: told "nothing was recorded" about a create that was, it may
start the work again under a new key and make a second job. So the words depend on the
call (docs/operations.md, "What a 503 says"):

- a read (`GET`, `HEAD`: a body, a list, `/wait`) changes nothing: the operation is
  unchanged by it; ask again after `Retry-After`;
- a create says whether its intent was recorded, as far as this process knows it
  (`CreateInterrupted`, raised by the create's service): not recorded (nothing was sent
  by this call), not known (the fault met the intent's own transaction; still nothing
  was sent by this call), or recorded (the operation exists and may have been sent). In
  every case the same `Idempotency-Key` is the safe retry, never a new one;
- any other write (cancel, approve, resolve) may or may not have taken effect: read the
  operation, then repeat it if it did not.
"""

from __future__ import annotations

from typing import Any, Literal

Intent = Literal["not_recorded", "unknown", "recorded"]

# What went wrong, by the kind write_faults.kind_of gives.
_CAUSE = {
    "storage_full": "the gateway's storage is full",
    "database_busy": (
        "the gateway's database did not answer within its bound (a lock held by another "
        "process, or a statement too long)"
    ),
    "database_unavailable": "the gateway lost its database (unreachable, or its connection cut)",
}


class CreateInterrupted(Exception):
    """A storage or database fault during a create, with what is known of its intent.

    Raised from the fault (`raise CreateInterrupted(...) from err`), so the fault's kind
    is still found on the chain."""

    def __init__(self, intent: Intent, operation_id: str | None = None) -> None:
        super().__init__(f"create interrupted; intent {intent}")
        self.intent: Intent = intent
        self.operation_id = operation_id


def call_of(method: str, path: str) -> str:
    """`read`, `create` or `write`: what the request was, by its method and path."""
    if method in ("GET", "HEAD"):
        return "read"
    if method == "POST" and path.rstrip("/").endswith("/v1/operations"):
        return "create"
    return "write"


def find_create(exc: BaseException) -> CreateInterrupted | None:
    """The `CreateInterrupted` on the exception's chain, if any."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        if isinstance(current, CreateInterrupted):
            return current
        seen.add(id(current))
        todo += [current.__cause__, current.__context__]
    return None


def words(
    kind: str, call: str, retry: int, create: CreateInterrupted | None = None
) -> tuple[str, dict[str, Any]]:
    """The message and details of a fault's answer for this call."""
    cause = _CAUSE.get(kind, _CAUSE["database_unavailable"])
    details: dict[str, Any] = {"retry_after_seconds": retry}
    if call == "read":
        return (
            f"NOT read: {cause}. A read changes nothing: the operation, if any, is unchanged "
            f"by this call and goes on as before. Ask again after {retry} seconds.",
            details,
        )
    if call == "write":
        return (
            f"NOT confirmed: {cause} during this request, so whether it took effect is not "
            f"known. Read the operation after {retry} seconds, and repeat the request only "
            "if it did not take effect.",
            details,
        )
    intent: Intent = create.intent if create is not None else "unknown"
    details["intent_recorded"] = {"recorded": True, "not_recorded": False}.get(intent)
    same_key = (
        f"Retry after {retry} seconds with the SAME Idempotency-Key: that is safe, and it "
        "finds the operation if one was recorded. Do not use a new key: that could start "
        "the work twice."
    )
    if intent == "not_recorded":
        return (
            f"NOT started: {cause}, so this call recorded nothing and sent nothing to the "
            f"provider. {same_key}",
            details,
        )
    if intent == "recorded" and create is not None and create.operation_id:
        op_id = create.operation_id
        details["operation_id"] = op_id
        return (
            f"RECORDED, answer lost: the intent of this create was recorded as operation "
            f"{op_id}, then {cause} before the answer was ready. The create may already have "
            "been sent to the provider, and the gateway carries it on by itself. "
            f"{same_key} Or read GET /v1/operations/{op_id}.",
            details,
        )
    return (
        f"NOT confirmed: {cause} while this create's intent was being recorded, so whether "
        "it was recorded is not known; this call sent nothing to the provider (if the intent "
        f"was recorded, the gateway sends it by itself). {same_key}",
        details,
    )
