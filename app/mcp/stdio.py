"""`jobgate mcp --url URL`: the MCP server over stdio, for desktop agents.

The tools call the gateway at URL over HTTP with one API key (from the environment),
so the desktop agent gets exactly what that key may see and do.
"""

from __future__ import annotations

from app.mcp.tasks import build_server_with_tasks
from jobgate_client import AsyncClient


async def serve(url: str, api_key: str | None) -> None:
    """Serve MCP on stdin/stdout until the client closes it."""
    async with AsyncClient(url, api_key) as client:
        server = build_server_with_tasks(lambda ctx: client, lambda ctx: client)
        await server.run_stdio_async()
