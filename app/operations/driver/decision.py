"""What one step decided: the next state (or none), its evidence, and when to look again."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.operations.domain.states import Evidence, State
from app.providers.calls.types import CallResult, Exchange


@dataclass(frozen=True)
class Note:
    """A history row that is neither a transition nor an exchange (e.g. a refused resend)."""

    kind: str
    cause: str
    data: dict[str, Any] | None = None


@dataclass
class Decision:
    """The outcome of one step, applied atomically by the runner under the lease."""

    to: State | None  # None: no state change, only an observation and a new schedule
    cause: str
    evidence: Evidence | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    delay: float | None = None  # seconds until the next look; None when done or `again`
    again: bool = False  # run the next step now, still under the same lease
    # With `again`: this decision may be written together with the next step's, after that
    # step's provider call (a pure step, or one a crash sends back to a status read anyway).
    defer: bool = False
    exchanges: list[Exchange] = field(default_factory=list)
    observation: dict[str, Any] | None = None
    carry: CallResult | None = None  # a result already in hand for the next step
    failed_items: list[Any] = field(default_factory=list)  # rows for the errors endpoint
    notes: list[Note] = field(default_factory=list)  # written with the exchanges


def needs_human(
    state: State,
    cause: str,
    evidence: Evidence,
    message: str,
    *,
    details: dict[str, Any] | None = None,
    exchanges: list[Exchange] | None = None,
    notes: list[Note] | None = None,
) -> Decision:
    """Automation stops in a needs-attention state; `error` says why in plain words."""
    error: dict[str, Any] = {"code": state.value, "message": message}
    if details:
        error["details"] = details
    return Decision(
        state,
        cause,
        evidence,
        {"error": error},
        exchanges=list(exchanges or []),
        notes=list(notes or []),
    )
