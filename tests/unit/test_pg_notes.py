"""The NOTIFY payload of a transition (app/operations/repository/writes.py) and how the
listener relays it (app/core/db/drivers/pg_listen.py): changed, certainly not done, due when."""

from __future__ import annotations

from datetime import UTC, datetime

from app.core.db.drivers.pg_listen import relay
from app.core.runtime.notify import Notifier
from app.operations.domain.states import State
from app.operations.repository.writes import note

DUE = datetime(2026, 12, 2, 18, 0, 0, 250000, tzinfo=UTC)


def test_the_payload_says_done_open_or_due() -> None:
    assert note("op_1", State.SUCCEEDED, {"next_poll_at": None}) == "op_1"
    assert note("op_1", State.OBSERVING, {"lease_expires_at": DUE}) == "op_1 open"  # held
    released = {"lease_owner": None, "lease_expires_at": None, "next_poll_at": DUE}
    assert note("op_1", State.ACCEPTED, released) == f"op_1 open {DUE.timestamp():.6f}"


def test_the_listener_wakes_waiters_and_tells_the_observer_when_it_falls_due() -> None:
    notifier = Notifier()
    seen: list[datetime] = []
    notifier.on_due = seen.append
    relay(note("op_1", State.ACCEPTED, {"lease_owner": None, "next_poll_at": DUE}), notifier)
    relay("op_2 open", notifier)
    relay("op_3 open not-a-time", notifier)  # a malformed time is ignored, not raised
    assert seen == [DUE]
