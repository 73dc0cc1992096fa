"""A real gateway process for the agent-side tests (client, MCP), on its own database.

The client and the MCP server talk to jobgate only over HTTP, so they are tested
against `jobgate serve` as a process (time-scaled) and the session's mock provider.
A module can share one gateway on the conftest's `module_database_url`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from app.auth import service as keys
from app.core.db.database import Database
from app.core.runtime.clock import SystemClock
from tests.support.processes import gateway_env, gateway_process

# Explicit deadlines: the time-scaled defaults would end a never-finishing job in seconds.
LONG_DEADLINES = {"create_seconds": 600, "result_seconds": 600, "cancel_seconds": 600}


def agent_env(database_url: str, mock_url: str, tmp: Path, **extra: Any) -> dict[str, str]:
    """The process environment of a time-scaled test gateway (dev auth unless told)."""
    return gateway_env(database_url, mock_url, tmp / "data", **extra)


@contextmanager
def gateway(env: dict[str, str], log: Path) -> Iterator[str]:
    """`jobgate serve` with its observer; yields its base URL."""
    with gateway_process(env, log) as (_, url):
        yield url


def mint_keys(database_url: str, roles: dict[str, str]) -> dict[str, str]:
    """API keys by name (`{"agent-a": "agent", ...}`), written straight to the database."""

    async def run() -> dict[str, str]:
        db = Database(database_url)
        try:
            out = {}
            for name, role in roles.items():
                _, key = await keys.create(db, name, role, SystemClock().now())
                out[name] = key
            return out
        finally:
            await db.dispose()

    return asyncio.run(run())


def mock_job(scenario: dict[str, Any]) -> dict[str, Any]:
    """A mock create input."""
    return {"scenario": scenario}


@asynccontextmanager
async def mcp_session(url: str, key: str | None = None) -> AsyncIterator[McpClient]:
    """The official MCP client over streamable HTTP at `{url}/mcp`, with a Bearer key."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    timeout = httpx2.Timeout(30.0, read=120.0)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        async with McpClient(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            yield client


async def call(client: McpClient, tool: str, **arguments: Any) -> CallToolResult:
    """One tool call; the result as the client received it."""
    return await client.call_tool(tool, arguments)


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)
