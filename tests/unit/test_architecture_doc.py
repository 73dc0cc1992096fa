"""docs/architecture.md's state table is the state machine's: every state, with the status
an agent sees for it (app/operations/domain/states.py)."""

from __future__ import annotations

import re
from pathlib import Path

from app.operations.domain.states import STATUS_OF, State

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def test_the_state_table_lists_every_state_with_its_status() -> None:
    rows = re.findall(r"^\| `([a-z_]+)` \| `([a-z_]+)` \| ", DOC.read_text(), re.M)
    assert dict(rows) == {s.value: STATUS_OF[s].value for s in State}
    assert len(rows) == len(State)
