"""`GET /metrics`: Prometheus text format from the official client's default registry.

Counters and histograms are updated where things happen (app/core/telemetry.py); the
two gauges that describe the database (operations by state, the attention inbox) are
read at scrape time in one short read transaction.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from app.core import telemetry
from app.operations import repository as repo

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """Everything jobgate counts, plus the process collectors of prometheus_client."""
    db = request.app.state.ctx.db
    async with db.read() as session:
        by_state = await repo.open_state_counts(session)
        attention = await repo.attention_count(session)
    for state, n in by_state.items():
        telemetry.OPERATIONS.labels(state).set(n)
    telemetry.NEEDS_ATTENTION.set(attention)
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
