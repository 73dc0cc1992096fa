"""One operation as the code reads and moves it: a plain typed row of the `operations`
table (its columns are declared in `models.py`; tests/unit/test_operation_row.py keeps
the two in step).

Reads build this instead of an instance of the mapped table class: a mapped instance
is built through the ORM's instrumentation, attribute by attribute, at about 0.3 ms per
row, and nothing here needs its change tracking (every write is an explicit statement,
app/operations/repository/writes.py). docs/performance.md has the measurement.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.operations.domain.states import State


@dataclass(slots=True, kw_only=True, eq=False)
class Operation:
    """The current state of one logical operation (the projection of its history)."""

    id: str
    principal: str
    idempotency_key: str
    fingerprint: str
    provider: str
    kind: str
    input: Any
    provider_token: str
    trace_id: str
    single_create: str = "none"

    state: State
    version: int = 0

    remote_job_id: str | None = None
    remote_status_url: str | None = None
    remote_cancel_url: str | None = None
    remote_state: str | None = None
    remote_class: str | None = None
    progress_completed: int | None = None
    progress_total: int | None = None

    create_deadline_at: datetime
    result_deadline_at: datetime
    cancel_deadline_at: datetime | None = None
    cancel_seconds: float | None = None

    next_poll_at: datetime | None = None
    poll_attempt: int = 0
    next_poll_reason: str | None = None

    lease_owner: str | None = None
    lease_expires_at: datetime | None = None
    lease_token: int = 0
    step_failures: int = 0

    result: Any = None
    result_ref: str | None = None
    result_size: int | None = None
    result_sha256: str | None = None
    result_summary: Any = None
    outcome: str | None = None
    error: Any = None

    cancel_reason: str | None = None
    cancel_requested_by: str | None = None
    cancel_requested_at: datetime | None = None

    acknowledged_at: datetime | None = None
    acknowledged_by: str | None = None

    callback_url: str | None = None
    labels: Any = None
    approval: Any = None
    cost: float | None = None
    gate: Any = None
    validation: Any = None

    created_at: datetime
    updated_at: datetime
