"""`GET /metrics`: Prometheus text format from the official client's default registry.

Counters and histograms are updated where things happen (app/core/obs/telemetry.py); the
two gauges that describe the database (operations by state, the attention inbox) are
read at scrape time in one short read transaction. When the database cannot be read,
the scrape still answers 200 with everything the process knows, and
`jobgate_database_up` is 0 (the database gauges keep their last values): a scrape that
failed would lose the process's own figures exactly when they matter.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from app.core.obs import telemetry
from app.operations import repository as repo

log = logging.getLogger(__name__)
router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """Everything jobgate counts, plus the process collectors of prometheus_client."""
    db = request.app.state.ctx.db
    try:
        async with db.read() as txn:
            by_state = await repo.open_state_counts(txn)
            attention = await repo.attention_count(txn)
    except Exception:  # unreachable however the driver says it (as readiness does)
        log.warning("metrics: the database could not be read", exc_info=True)
        telemetry.DATABASE_UP.set(0)
    else:
        telemetry.DATABASE_UP.set(1)
        for state, n in by_state.items():
            telemetry.OPERATIONS.labels(state).set(n)
        telemetry.NEEDS_ATTENTION.set(attention)
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
