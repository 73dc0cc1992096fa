"""One operation as the code reads and moves it: the typed row of the `operations` table,
which is declared here, once (`app/core/db/row_table.py` builds the SQLModel table class,
`OperationTable` in `models.py`, from these fields).

Reads build this instead of an instance of a mapped class: a mapped instance is built
through the ORM's instrumentation, attribute by attribute, at about 0.3 ms per row, and
nothing here needs its change tracking (every write is an explicit statement,
app/operations/repository/writes.py). docs/performance.md has the measurement.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import JSON

from app.core.db.row_table import column
from app.core.db.types import StrEnumType, UTCDateTime
from app.operations.domain.states import State


def _ts() -> Any:
    return column(None, sa_type=UTCDateTime, nullable=True)


def _json() -> Any:
    return column(None, sa_type=JSON, nullable=True)


@dataclass(slots=True, kw_only=True, eq=False)
class Operation:
    """The current state of one logical operation (the projection of its history)."""

    id: str = column(primary_key=True)
    principal: str = column()
    idempotency_key: str = column()
    fingerprint: str = column()
    provider: str = column()
    kind: str = column()
    input: Any = column(sa_type=JSON)
    provider_token: str = column()
    trace_id: str = column(index=True)
    # How a single remote job is ensured (token | lookup | none), as promised at intake.
    single_create: str = column("none")

    state: State = column(sa_type=StrEnumType(State), index=True)
    version: int = column(0)

    remote_job_id: str | None = column(None)
    # Where the provider said to read and cancel the job (a create answer's URL, e.g.
    # Operation-Location); NULL: the profile's path templates.
    remote_status_url: str | None = column(None)
    remote_cancel_url: str | None = column(None)
    remote_state: str | None = column(None)
    remote_class: str | None = column(None)
    progress_completed: int | None = column(None)
    progress_total: int | None = column(None)

    create_deadline_at: datetime = column(sa_type=UTCDateTime)
    result_deadline_at: datetime = column(sa_type=UTCDateTime)
    cancel_deadline_at: datetime | None = _ts()
    cancel_seconds: float | None = column(None)  # asked at create; the cancel deadline's length

    # When an observer should next look at it; NULL once the gateway has nothing to do.
    next_poll_at: datetime | None = _ts()
    poll_attempt: int = column(0)
    next_poll_reason: str | None = column(None)
    # Polls since the last recorded change that saw nothing new, and when the last was
    # made: counted, not written one by one (app/operations/driver/write.py).
    quiet_polls: int = column(0)
    quiet_last_at: datetime | None = _ts()
    # Reads in a row the provider refused the same way (app/operations/driver/read_failures.py):
    # how many, the refusal ("status HTTP 400"), and when the first of them was answered.
    read_failures: int = column(0)
    read_failure: str | None = column(None)
    read_failing_since: datetime | None = _ts()

    lease_owner: str | None = column(None)
    lease_expires_at: datetime | None = _ts()
    lease_token: int = column(0)
    step_failures: int = column(0)  # exceptions in a row while moving it; `stalled` at the limit

    result: Any = _json()
    result_ref: str | None = column(None)
    result_size: int | None = column(None)
    result_sha256: str | None = column(None)
    result_summary: Any = _json()
    # Failed items listed at `/errors` (result_items rows): the words point there only then.
    errors_listed: int = column(0)
    # The outcome table's verdict for a result it collected (app/providers/answers/outcome.py):
    # `succeeded` or `completed_with_errors` on a `succeeded` row; NULL elsewhere.
    outcome: str | None = column(None)
    error: Any = _json()

    cancel_reason: str | None = column(None)
    cancel_requested_by: str | None = column(None)
    cancel_requested_at: datetime | None = _ts()

    # An operator's acknowledgement of a result that needs a look (e.g. partial results).
    acknowledged_at: datetime | None = _ts()
    acknowledged_by: str | None = column(None)

    callback_url: str | None = column(None)
    labels: Any = _json()
    approval: Any = _json()
    # The policy's cost units for this create (docs/policy.md); 0 once it was never sent.
    cost: float | None = column(None)
    # The approval gate: rule, who asked, cost, deadline, and the decision once made.
    gate: Any = _json()
    # The agent's result checks (`validation` beside `input`); NULL: the profile's alone.
    validation: Any = _json()

    created_at: datetime = column(sa_type=UTCDateTime)
    updated_at: datetime = column(sa_type=UTCDateTime)
