"""`/dashboard`: how the work is going, for an operator, as server-rendered SVG.

Operations created per hour by their status now, the time from intent to end per
provider and kind (50th, 90th, 99th percentile), failure and attention rates, and the
slowest in flight (app/operations/services/figures.py). Nothing is fetched by the
browser: no script, no chart library, no CDN. The same figures for Prometheus and
Grafana are in deploy/ (docs/operations.md, "Dashboards and alerts").
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.core.http.errors import ApiError, DomainError, as_api_error
from app.operations.api.endpoints import context_of
from app.operations.services import figures as fig
from app.operations.services import queries
from app.views import charts
from app.views.render import error_page, page
from app.views.routes import ATTENTION_LIMIT, operator

router = APIRouter(include_in_schema=False)
LABELS = tuple(f"p{round(q * 100)}" for q in fig.QUANTILES)


@router.get("/dashboard", response_class=HTMLResponse)
async def dashboard(request: Request) -> HTMLResponse:
    """The figures of the last hours, drawn on the server."""
    who: str | None = None
    try:
        caller = await operator(request)
        who = caller.name
        ctx = context_of(request)
        figures = await fig.figures(ctx)
        waiting = await queries.attention_count(ctx, caller, cap=ATTENTION_LIMIT)
    except (ApiError, DomainError) as exc:
        return error_page(request, as_api_error(exc), who=who)
    shown = [s for s in fig.STATUSES if any(c.get(s) for c in figures.per_hour)]
    lanes = figures.lanes
    return page(
        request,
        "dashboard.html",
        {
            "title": "Dashboard",
            "who": who,
            "now": figures.now,
            "attention_count": waiting,
            "figures": figures,
            "hours": fig.HOURS,
            "created": sum(sum(c.values()) for c in figures.per_hour),
            "per_hour_svg": charts.stacked_hours(figures.hours, figures.per_hour, shown),
            "quantiles_svg": charts.quantile_bars(
                [(f"{lane.provider} / {lane.kind}", lane.quantiles) for lane in lanes], LABELS
            ),
            "labels": LABELS,
            "seconds": charts.seconds_text,
        },
    )
