"""Seeding helpers for lease and claim tests (rows as the intake would write them)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.core.db.database import Database
from app.operations import repository as repo
from app.operations.domain.operation import Operation
from app.operations.domain.states import State
from app.operations.services.intake import fingerprint, new_operation_id, new_provider_token


async def seed_due(db: Database, n: int, *, state: str = "observing") -> datetime:
    """Insert `n` due operations; returns the `now` at which all of them are due."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    async with db.transaction() as txn:
        for i in range(n):
            await repo.insert_operation(
                txn,
                Operation(
                    id=new_operation_id(),
                    principal="dev",
                    idempotency_key=f"k{i}",
                    fingerprint=fingerprint("mock", "report", {"i": i}),
                    provider="mock",
                    kind="report",
                    input={"i": i},
                    provider_token=new_provider_token(),
                    trace_id=f"tr_{i}",
                    state=State(state),
                    version=1,
                    remote_job_id=f"job_{i}",
                    create_deadline_at=now + timedelta(hours=1),
                    result_deadline_at=now + timedelta(hours=2),
                    next_poll_at=now - timedelta(seconds=i % 7),
                    poll_attempt=0,
                    lease_token=0,
                    created_at=now,
                    updated_at=now,
                ),
            )
    return now
