"""The MCP server on the gateway, at `/mcp` (streamable HTTP).

Its tools call the gateway's own REST API in-process (`httpx2.ASGITransport` on the
app) with the caller's `Authorization: Bearer` key, so an MCP call is authorised,
scoped and answered exactly like the REST call it makes. Stateless HTTP with JSON
answers: no session lives in one process, so any gateway process (or the same one
after a restart) serves the next call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import httpx2
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from jobgate_client import AsyncClient

if TYPE_CHECKING:  # the SDK is imported when the endpoint starts, not with app.main
    from mcp.server.context import ServerRequestContext
    from mcp.server.mcpserver import Context
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

MCP_PATH = "/mcp"
# In-process only: never resolved or dialled. A loopback name, as dev mode's Host check
# (app/core/http/dev_guard.py) wants of every request, this one's too.
INTERNAL_URL = "http://127.0.0.1"


class McpEndpoint:
    """The ASGI endpoint at `/mcp`; `running()` starts its session manager in the
    gateway's lifespan (a fresh one per lifespan: the SDK's runs only once)."""

    def __init__(self, gateway: ASGIApp, *, host: str) -> None:
        self._gateway = gateway
        self._host = host  # loopback: the SDK's DNS-rebinding guard allows localhost only
        self._http: httpx2.AsyncClient | None = None
        self._asgi: StreamableHTTPASGIApp | None = None

    def route(self) -> Route:
        return Route(MCP_PATH, endpoint=self)

    def _connect(self, ctx: Context[Any, Any]) -> AsyncClient:
        return self._client_for(ctx.headers)

    def _connect_task(self, ctx: ServerRequestContext[Any, Any]) -> AsyncClient:
        return self._client_for(getattr(ctx.request, "headers", None))

    def _client_for(self, headers: Mapping[str, str] | None) -> AsyncClient:
        """The caller's key, forwarded: the gateway decides what it may see and do."""
        assert self._http is not None  # tools run only while running() is entered
        scheme, _, key = (headers or {}).get("authorization", "").partition(" ")
        return AsyncClient(
            http=self._http, api_key=key.strip() if scheme.lower() == "bearer" else None
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

        from app.mcp.tasks import build_server_with_tasks

        server = build_server_with_tasks(self._connect, self._connect_task)
        server.streamable_http_app(
            streamable_http_path=MCP_PATH, stateless_http=True, json_response=True, host=self._host
        )
        transport = httpx2.ASGITransport(app=self._gateway)
        async with (
            httpx2.AsyncClient(transport=transport, base_url=INTERNAL_URL) as http,
            server.session_manager.run(),
        ):
            self._http = http
            self._asgi = StreamableHTTPASGIApp(server.session_manager)
            try:
                yield
            finally:
                self._asgi = None
                self._http = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._asgi is None:
            response = JSONResponse(
                {"error": {"code": "mcp_unavailable", "message": "The MCP server is not running."}},
                status_code=503,
            )
            await response(scope, receive, send)
            return
        if scope.get("method") == "GET":
            # A GET would open a server-to-client stream that nothing here ever writes to
            # (stateless, JSON answers) and that no key is needed to hold open: refused,
            # as the transport allows (405), so there is no stream to cap.
            response = JSONResponse(
                {
                    "error": {
                        "code": "method_not_allowed",
                        "message": "This MCP server answers POST only (stateless, JSON).",
                        "details": {},
                    }
                },
                status_code=405,
                headers={"Allow": "POST"},
            )
            await response(scope, receive, send)
            return
        await self._asgi(scope, receive, send)


def mount(app: Any, *, host: str) -> McpEndpoint:
    """Add `/mcp` to the gateway app; enter `running()` in its lifespan."""
    endpoint = McpEndpoint(app, host=host)
    app.router.routes.append(endpoint.route())
    return endpoint
