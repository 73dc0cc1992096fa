"""`/v1/readyz` (database at the head migration, a write can succeed, disk, clock) and the
`/` landing page.

`/v1/healthz` only says the process answers; `/v1/readyz` says it can do its job, so
load balancers and compose health checks route to a gateway only when writes will work.
Both are open (no API key), like a load balancer expects.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse

from app.audit.readiness import write_blocker
from app.core.db.schema_state import check

router = APIRouter()

LANDING = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>jobgate</title></head>
<body>
<h1>jobgate</h1>
<p>A gateway that owns long-running provider jobs for AI agents.</p>
<ul>
<li><a href="/docs">/docs</a>: the agent API (OpenAPI, try it out)</li>
<li><a href="/operations">/operations</a>: operations, the attention inbox, timelines
 (operator key)</li>
<li><a href="/v1/readyz">/v1/readyz</a>: readiness (database reachable, schema at head)</li>
<li><a href="/metrics">/metrics</a>: Prometheus metrics</li>
</ul>
</body></html>
"""


@router.get("/v1/readyz", operation_id="ready", include_in_schema=False)
async def ready(request: Request) -> JSONResponse:
    """200 when the database answers and is at the head migration, a write can succeed
    (the audit chain's head is there), the data disk has more
    free space than its reserve (JOBGATE_STORAGE_RESERVE_BYTES) and this process's clock is
    within JOBGATE_CLOCK_SKEW_LIMIT_SECONDS of the database's; 503 with the reasons."""
    ctx = request.app.state.ctx
    state = await check(ctx.db)
    body = state.as_json()
    free = ctx.results.free_bytes()
    body["storage_free_bytes"] = free
    body["clock_offset_seconds"] = ctx.clock_health.offset_seconds
    reasons = [] if state.ready else [state.reason]
    if state.ready and (blocked := await _write_blocker(ctx)):
        reasons.append(blocked)
    if free < ctx.results.reserve_bytes:
        reasons.append(
            f"the data disk has {free} bytes free, below its reserve of {ctx.results.reserve_bytes}"
        )
    if skew := ctx.clock_health.refusal():
        reasons.append(skew)
    ready = not reasons
    if not ready:
        body["ready"] = False
        body["reason"] = "; ".join(reasons)
    return JSONResponse(body, status_code=200 if ready else 503)


async def _write_blocker(ctx: Any) -> str | None:
    try:
        return await write_blocker(ctx.db, audit_enabled=ctx.settings.audit_enabled)
    except Exception as exc:  # a read that fails is a database that cannot take writes
        return f"the audit chain's head cannot be read: {type(exc).__name__}"


@router.get("/", include_in_schema=False)
async def landing() -> HTMLResponse:
    """Where a person who opens the bare URL should go next."""
    return HTMLResponse(LANDING)
