"""`next_action` field by field: the REST call as `method`, `path` and `query` beside the
whole `call`, and, over MCP, the tool that makes it with its `arguments`.

An agent that looks for a method and a path finds them without parsing a string; one
that calls MCP tools finds the arguments to pass (docs/agent-api.md, "The operation
body"). The MCP server fills the same fields for a gateway that did not
(app/mcp/replies.py), with these functions.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

from app.operations.contract.schemas import NextAction

# wait_for_operation's default hold (app/mcp/tools.py WAIT_DEFAULT_S; a unit test holds
# the two equal): the MCP arguments name it, so an agent passes it on unchanged.
MCP_WAIT_SECONDS = 30.0
_OP_ID = re.compile(r"^/v1/operations/(op_[^/?]+)")


def split_call(call: str) -> tuple[str, str, dict[str, str | int] | None]:
    """`GET /v1/x?limit=50` -> (`GET`, `/v1/x`, {"limit": 50}); no query: None."""
    method, _, target = call.partition(" ")
    path, _, qs = target.partition("?")
    query: dict[str, str | int] = {
        k: int(v) if v.isdigit() else v for k, v in parse_qsl(qs, keep_blank_values=True)
    }
    return method, path, query or None


def tool_arguments(
    tool: str, path: str, query: dict[str, str | int] | None
) -> dict[str, Any] | None:
    """The arguments of `tool` that make the call to `path` (None for an unknown tool)."""
    found = _OP_ID.match(path)
    op = {"operation_id": found.group(1)} if found else {}
    if tool == "wait_for_operation":
        return {**op, "timeout_seconds": MCP_WAIT_SECONDS}
    if tool in ("get_operation", "get_result", "cancel_operation"):
        return op
    if tool == "get_errors":
        limit = (query or {}).get("limit")
        return {**op, "limit": limit} if isinstance(limit, int) else op
    if tool == "list_attention":
        return {}
    return None


def next_action(call: str, tool: str | None, after: float | None = None) -> NextAction:
    """The `next_action` of `call`, with `tool` (MCP on) and its arguments."""
    method, path, query = split_call(call)
    arguments = tool_arguments(tool, path, query) if tool else None
    return NextAction(
        call=call,
        method=method,
        path=path,
        query=query,
        tool=tool,
        arguments=arguments,
        after_seconds=after,
    )
