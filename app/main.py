"""create_app(): wiring and lifespan only."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
from fastapi import FastAPI

from app import audit
from app.auth.key_first import KeyFirst
from app.callbacks import outbox
from app.callbacks.delivery import CallbackDelivery
from app.core.config import Settings
from app.core.db.db_clock import DatabaseClock, measuring
from app.core.db.drivers.pg_listen import listening
from app.core.http import errors
from app.core.http.dev_guard import DevModeGuard
from app.core.http.disconnect import CancelOnDisconnect
from app.core.http.limits import BodyLimit
from app.core.http.ssrf import Resolver
from app.core.obs import tracing
from app.core.runtime.clock import Clock, SystemClock
from app.core.runtime.notify import Notifier
from app.health import api_docs, metrics_route
from app.health import routes as health_routes
from app.mcp import http as mcp_http
from app.observer.worker import Observer
from app.operations.api import (
    approval_routes,
    control_routes,
    openapi_targets,
    result_routes,
    wait_routes,
)
from app.operations.api import endpoints as operations_endpoints
from app.operations.api.holds import HoldLimits
from app.operations.context import AppContext
from app.operations.domain.estimate import EstimateCache
from app.operations.services import estimates
from app.operations.services.waiting import WaitHub
from app.policy.loader import load_policy
from app.providers.calls.client import ProviderClient
from app.providers.calls.outbound import outbound_client
from app.providers.language.loader import load_profiles
from app.results.store import ResultStore
from app.views import dashboard as views_dashboard
from app.views import login as views_login
from app.views import routes as views_routes
from app.webhooks import routes as webhooks_routes
from app.webhooks.secrets import WebhookSecrets


def holds_until_done(path: str) -> bool:
    """Requests that may hold for long: an MCP tool call, a server-side wait."""
    return path == mcp_http.MCP_PATH or path.endswith("/wait")


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def build_context(
    settings: Settings,
    *,
    http: httpx2.AsyncClient,
    clock: Clock | None = None,
    host_clock: Clock | None = None,
) -> AppContext:
    """The shared machinery; profiles are validated here so a bad one fails start-up.

    Every process's clock is built here: unless a test hands in its own `clock`, the
    host clock (`host_clock`, the system's by default) corrected to the database's
    (app/core/db/db_clock.py; `measuring` keeps it measured)."""
    if clock is None:
        clock = DatabaseClock(
            host_clock or SystemClock(),
            limit_seconds=settings.clock_skew_limit_seconds,
            max_round_trip_seconds=settings.clock_max_round_trip_seconds,
        )
    # Spans (JOBGATE_OTEL=on) for the gateway and the standalone observer alike; the lifespan
    # shuts them down, `observe` flushes at exit (tracing.setup).
    tracing.setup(settings.otel)
    env = settings.provider_env()
    profiles = load_profiles(settings.profiles_dir, env)
    policy = load_policy(settings.policy_file, profiles)  # a bad file fails start-up too
    ctx = AppContext(
        db=audit.audited_database(settings),
        client=ProviderClient(http, env),
        profiles=profiles,
        clock=clock,
        settings=settings,
        notifier=Notifier(),
        results=ResultStore(settings.data_dir, settings.storage_reserve_bytes),
        worker_id=settings.observer_id or default_worker_id(),
        env=env,
        policy=policy,
        on_done=(outbox.on_done,),  # completion callbacks follow the ledger's `done`
    )
    # How long jobs take (app/operations/services/estimates.py); a success here is added
    # to its kind's sample at once, without a query.
    ctx.estimates = EstimateCache(min_jobs=settings.estimate_min_jobs, limit=settings.estimate_jobs)
    ctx.on_done += (estimates.record_successes(ctx.estimates),)
    if isinstance(clock, DatabaseClock):
        ctx.clock_health = clock.health  # what readiness and the observer read
    return ctx


def create_app(
    settings: Settings | None = None,
    *,
    clock: Clock | None = None,
    host_clock: Clock | None = None,
    run_observer: bool = True,
    transport: httpx2.AsyncBaseTransport | None = None,
    resolver: Resolver | None = None,
) -> FastAPI:
    """The gateway. Tests pass a fake clock (or a host clock for the database's clock to
    correct) and drive the observer themselves, and may answer host names with their own
    `resolver` (never outside DNS)."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with outbound_client(transport, resolver=resolver) as http:
            ctx = build_context(settings, clock=clock, host_clock=host_clock, http=http)
            app.state.ctx = ctx
            # Measured before the observer's first claim, then kept measured.
            clock_kept = contextlib.AsyncExitStack()
            await clock_kept.enter_async_context(
                measuring(ctx.clock, ctx.db, settings.clock_check_seconds)
            )
            app.state.webhook_secrets = WebhookSecrets()  # fetched ones, for this process
            observer = Observer(ctx)
            app.state.observer = observer
            app.state.waits = WaitHub(ctx.db, ctx.notifier)
            app.state.holds = HoldLimits(settings.max_held_per_key)
            task = asyncio.create_task(observer.run()) if run_observer else None
            # Callbacks are delivered wherever observers run (`--no-observer`: by `observe`).
            callbacks = CallbackDelivery(ctx, http)
            app.state.callbacks = callbacks
            cb_task = asyncio.create_task(callbacks.run()) if run_observer else None
            try:
                async with listening(settings.database_url, ctx.notifier):
                    if mcp is None:
                        yield
                    else:
                        async with mcp.running():  # the MCP tools call this app's REST API
                            yield
            finally:
                await ctx.background.drain()  # creates still in flight end on their own
                observer.stop()
                callbacks.stop()
                if cb_task is not None:
                    with contextlib.suppress(asyncio.CancelledError):
                        await cb_task
                if task is not None:
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                await clock_kept.aclose()
                await ctx.db.dispose()
                tracing.shutdown()  # flushes the spans still queued

    app = FastAPI(
        title="jobgate",
        version="0.1.0",
        summary="A gateway that owns long-running provider jobs for AI agents.",
        lifespan=lifespan,
        docs_url=None,  # served from a package instead of a CDN (app/health/api_docs.py)
        redoc_url=None,  # ReDoc's script comes only from a CDN: one offline UI is enough
    )
    api_docs.install(app)
    app.state.settings = settings
    errors.install(app)
    app.include_router(operations_endpoints.router)
    app.include_router(wait_routes.router)
    app.include_router(result_routes.router)
    app.include_router(control_routes.router)
    app.include_router(approval_routes.router)
    app.include_router(views_routes.router)
    app.include_router(views_login.router)
    app.include_router(views_dashboard.router)
    app.include_router(webhooks_routes.router)
    app.include_router(health_routes.router)
    app.include_router(metrics_route.router)
    mcp = mcp_http.mount(app, host=settings.host) if settings.mcp else None  # /mcp
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.max_body_bytes,
        read_timeout=settings.request_body_timeout_seconds,
    )
    if settings.auth == "keys":  # outside BodyLimit: the key before any byte of the body
        app.add_middleware(KeyFirst)
    # Outermost: an MCP tool call or a /wait whose client went away stops holding.
    app.add_middleware(CancelOnDisconnect, held=holds_until_done)
    if settings.auth == "dev":  # outermost: Host, Origin and body type before anything runs
        app.add_middleware(DevModeGuard)
    openapi_targets.install(app, settings)
    return app
