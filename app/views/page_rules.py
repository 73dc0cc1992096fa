"""Which forms and which countdowns an operation's page shows, per state: one table.

The page of an operation offers only the actions that the server would accept in its
state, and shows a countdown ("in 4m 10s") only where a clock is really running for it
(docs/operations.md, "The operator view"). The states and the status an agent sees are
the table in docs/architecture.md, "States"; this table adds, for each, what its page
shows:

- `forms`: `cancel` (the intent to cancel), `approval` (approve or deny a held create),
  `resolve` (an operator's decision on what needs a person);
- `countdowns`: whether deadlines, the lease and the next poll read "in ..." (a running
  operation) or only as times (a held, finished or waiting one);
- `deadlines`: how the deadlines are worded: `running`, `stopped` ("No deadline is
  running"), or `from_approval` (a held create's deadlines count from its approval, so
  the stored times move by the time it is held).

A succeeded operation whose partial result waits for a person (in the attention inbox)
has its own row, `PARTIAL_RESULT`: its only form is `resolve` with `acknowledge`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.operations.domain.operation import Operation
from app.operations.domain.states import CANCELLING_STATES, NEEDS_ATTENTION, TERMINAL, State

Form = Literal["cancel", "approval", "resolve"]
Deadlines = Literal["running", "stopped", "from_approval"]
PARTIAL_RESULT = "partial_result"  # a succeeded operation with an unacknowledged partial result


@dataclass(frozen=True)
class PageRule:
    """What one state's page shows."""

    forms: frozenset[Form]
    countdowns: bool
    deadlines: Deadlines


HELD = PageRule(frozenset({"approval"}), countdowns=False, deadlines="from_approval")
RUNNING = PageRule(frozenset({"cancel"}), countdowns=True, deadlines="running")
CANCELLING = PageRule(frozenset(), countdowns=True, deadlines="running")
FINISHED = PageRule(frozenset(), countdowns=False, deadlines="stopped")
WAITING = PageRule(frozenset({"resolve"}), countdowns=False, deadlines="stopped")

RULES: dict[str, PageRule] = {
    State.AWAITING_APPROVAL: HELD,
    **{s: CANCELLING for s in CANCELLING_STATES},
    **{s: FINISHED for s in TERMINAL},
    **{s: WAITING for s in NEEDS_ATTENTION},
    PARTIAL_RESULT: WAITING,
}
for _state in State:  # every other state is one the gateway is moving forward
    RULES.setdefault(_state, RUNNING)


def row_of(op: Operation, why: str | None) -> str:
    """The table's row for `op`: its state, or `PARTIAL_RESULT` for a partial result
    waiting for a person (`why` is `attention.why(op)`)."""
    if op.state == State.SUCCEEDED and why:
        return PARTIAL_RESULT
    return str(op.state)


def decisions_for(row: str, offered: tuple[str, ...]) -> list[str]:
    """The resolve form's decisions for a row: `acknowledge` alone for a partial result,
    every other decision for a needs-attention state, none elsewhere."""
    if "resolve" not in RULES[row].forms:
        return []
    if row == PARTIAL_RESULT:
        return ["acknowledge"]
    return [d for d in offered if d != "acknowledge"]
