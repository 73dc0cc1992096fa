"""Tool arguments checked by name before any tool runs: an unknown or misspelled one is
a tool error naming it and the tool's accepted arguments, never silently dropped.

The SDK's argument models ignore names they do not declare, so `wait_for_operation
{"timeout": 1}` (for `timeout_seconds`) would hold the default 30 s. This middleware
(`MCPServer(middleware=)`, the SDK's public hook) reads each tool's published input
schema once (`list_tools`) and refuses a `tools/call` whose arguments name anything
else, with nothing called; values out of range are refused by the tool's own schema
(`Field(ge=, le=)`). docs/mcp.md, "What a result looks like".
"""

from __future__ import annotations

import difflib
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer

from app.mcp import replies

MAX_SHOWN = 60  # characters of an unknown argument's name repeated back


class ArgumentCheck:
    """Refuses a tool call with an argument its tool does not accept."""

    def __init__(self) -> None:
        self._server: MCPServer[Any] | None = None
        self._accepted: dict[str, tuple[str, ...]] | None = None

    def bind(self, server: MCPServer[Any]) -> None:
        """The server whose tools' input schemas say what each accepts."""
        self._server = server
        self._accepted = None

    async def accepted(self) -> dict[str, tuple[str, ...]]:
        """Each tool's argument names, from its published input schema (read once)."""
        if self._accepted is None:
            assert self._server is not None, "bind() the server first"
            listed = await self._server.list_tools()
            self._accepted = {
                t.name: tuple((t.input_schema or {}).get("properties", {})) for t in listed
            }
        return self._accepted

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, dict):
            arguments = params.get("arguments")
            names = (await self.accepted()).get(str(params.get("name")))
            if names is not None and isinstance(arguments, dict):
                unknown = [str(k) for k in arguments if k not in names]
                if unknown:
                    return refusal(str(params["name"]), unknown, names)
        return await call_next(ctx)


def refusal(tool: str, unknown: list[str], accepted: tuple[str, ...]) -> dict[str, Any]:
    """The tool error, as the wire's `CallToolResult`: what is unknown, what it may have
    meant, and every argument the tool accepts."""
    said = []
    for name in unknown:
        close = difflib.get_close_matches(name, accepted, n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        said.append(f"{name[:MAX_SHOWN]!r}{hint}")
    message = (
        f"{tool} has no argument {', '.join(said)}; it accepts "
        f"{', '.join(accepted)}. Nothing was called: call it again with those names."
    )
    result = replies.error(
        "unknown_argument",
        message,
        {"unknown": [n[:MAX_SHOWN] for n in unknown], "accepted": list(accepted)},
    )
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)
