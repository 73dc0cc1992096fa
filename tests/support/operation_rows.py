"""An operation row as the presenter reads it, for tests that render bodies without a
database: every field a body needs, `state` and anything in `kw` chosen by the test."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from app.operations.domain.operation import Operation
from app.operations.domain.states import State

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def an_operation(state: State, **kw: Any) -> Operation:
    values: dict[str, Any] = {
        "id": "op_01TEST",
        "principal": "dev",
        "idempotency_key": "k",
        "fingerprint": "f",
        "provider": "mock",
        "kind": "report",
        "input": {},
        "provider_token": "t",
        "trace_id": "tr_1",
        "state": state,
        "remote_job_id": "job_1",
        "create_deadline_at": NOW + timedelta(seconds=60),
        "result_deadline_at": NOW + timedelta(seconds=600),
        "created_at": NOW,
        "updated_at": NOW,
        "labels": {},
    }
    values.update(kw)
    return Operation(**values)
