"""Tool results from REST bodies: the body as structured content, its words as text.

Pure functions over what the REST API returned (through `jobgate_client`); nothing
here knows how the gateway works inside.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult, TextContent

from app.operations.contract import actions
from jobgate_client import ApiError, GatewayUnavailable, Operation, OperationList

# An operation's verdict, beside `error` at the top of a refusal (as the REST 409 has it).
VERDICT_FIELDS = ("done", "outcome", "message", "next_action")
RESULT_CHUNK_CHARS = 20_000  # default characters of result JSON per get_result call
MAX_RESULT_CHUNK_CHARS = 100_000

# next_action.call -> the MCP tool that makes the same call (contract v2 adds `tool`).
_TOOL_FOR_CALL = (
    (re.compile(r"^GET /v1/operations/[^/]+/wait"), "wait_for_operation"),
    (re.compile(r"^GET /v1/operations/[^/]+/result"), "get_result"),
    (re.compile(r"^GET /v1/operations/[^/]+/errors"), "get_errors"),
    (re.compile(r"^GET /v1/attention"), "list_attention"),
    (re.compile(r"^GET /v1/operations/[^/?]+$"), "get_operation"),
)


def with_tool(body: Operation) -> Operation:
    """The body with `next_action` field by field (`method`, `path`, `query`) and naming
    the MCP tool and its `arguments`, where the gateway did not."""
    action = body.get("next_action")
    if not isinstance(action, dict):
        return body
    call = str(action.get("call", ""))
    tool = action.get("tool") or next((n for rx, n in _TOOL_FOR_CALL if rx.match(call)), None)
    method, path, query = actions.split_call(call)
    filled: dict[str, Any] = {"method": method, "path": path, "query": query}
    if tool:
        filled["tool"] = tool
        filled["arguments"] = actions.tool_arguments(str(tool), path, query)
    missing = {k: v for k, v in filled.items() if action.get(k) is None and v is not None}
    if not missing:
        return body
    out: dict[str, Any] = dict(body)
    out["next_action"] = {**action, **missing}
    return out  # type: ignore[return-value]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def reply(structured: Mapping[str, Any], text: str) -> CallToolResult:
    """A successful tool result: the REST body as structured content, words as text."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=dict(structured)
    )


def operation_reply(body: Operation) -> CallToolResult:
    body = with_tool(body)
    return reply(body, body["message"])


def refused(exc: ApiError | GatewayUnavailable, operation: Operation | None) -> CallToolResult:
    """A tool error: the gateway's code and message, and (when the error is about an
    existing operation) that operation's body, its `done`, `outcome`, `message` and
    `next_action` at the top, and its words, so the agent still knows what to do next."""
    if isinstance(exc, ApiError):
        error: dict[str, Any] = {"code": exc.code, "message": exc.message, "details": exc.details}
        text = f"Refused by the gateway ({exc.status} {exc.code}): {exc.message}"
    else:
        error = {"code": "gateway_unavailable", "message": str(exc)}
        text = f"The gateway could not be reached: {exc}. Try the same call again later."
    structured: dict[str, Any] = {"error": error}
    if operation is not None:
        operation = with_tool(operation)
        structured.update({k: operation.get(k) for k in VERDICT_FIELDS})
        structured["operation"] = operation
        if not text.endswith(operation["message"]):  # an older gateway's error omits it
            text += f"\nOperation {operation['operation_id']}: {operation['message']}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=True,
    )


def usage_error(message: str) -> CallToolResult:
    """A tool error for arguments the model can fix."""
    return error("invalid_arguments", message)


def error(code: str, message: str, details: Mapping[str, Any] | None = None) -> CallToolResult:
    """A tool error with the code the REST API gives the same mistake (docs/agent-api.md),
    for what the tool refuses before any call."""
    body: dict[str, Any] = {"code": code, "message": message}
    if details:
        body["details"] = dict(details)
    return CallToolResult(
        content=[TextContent(type="text", text=f"Refused ({code}): {message}")],
        structured_content={"error": body},
        is_error=True,
    )


def result_reply(body: Mapping[str, Any], cursor: str | None, max_chars: int) -> CallToolResult:
    """The checked result, in bounded chunks of its JSON text.

    A result that fits is the REST body unchanged. A larger one comes as `result_chunk`
    (characters `offset` to `offset + len` of the compact JSON) with `next_cursor`;
    concatenating the chunks in order gives the whole JSON text."""
    oid = body.get("operation_id")
    whole = _dumps(body.get("result"))
    offset = _offset(cursor, len(whole))
    if offset is None:
        return usage_error(f"cursor {cursor!r} is not one this tool handed out for {oid}")
    size = min(max(max_chars, 1), MAX_RESULT_CHUNK_CHARS)
    head = f"The checked result of operation {oid} (status {body.get('status')})"
    if body.get("status") in ("cancelled", "failed"):  # a kept partial output
        head = f"{body.get('message')} The kept partial output of operation {oid}"
    if offset == 0 and len(whole) <= size:
        return reply(body, f"{head}, complete:\n{whole}")
    chunk = whole[offset : offset + size]
    end = offset + len(chunk)
    more = end < len(whole)
    structured = {k: v for k, v in body.items() if k != "result"}
    structured.update(
        result_chunk=chunk,
        offset=offset,
        total_chars=len(whole),
        next_cursor=str(end) if more else None,
        complete=not more,
    )
    tail = (
        f"call get_result again with cursor {end} for the rest"
        if more
        else "this is the last chunk"
    )
    text = f"{head}: characters {offset}-{end} of {len(whole)} of its JSON; {tail}.\n{chunk}"
    return reply(structured, text)


def _offset(cursor: str | None, total: int) -> int | None:
    if cursor is None or cursor == "":
        return 0
    if not cursor.isascii() or not cursor.isdigit() or len(cursor) > 12:
        return None
    value = int(cursor)
    return value if value < max(total, 1) else None


def errors_reply(page: Mapping[str, Any]) -> CallToolResult:
    """One page of failed items, listed in the text too (the model reads the text)."""
    items = page.get("items") or []
    more = page.get("next_cursor")
    tail = f"more with cursor {more}" if more else "no more of them"
    text = (
        f"{len(items)} {'item' if len(items) == 1 else 'items'} that failed or never ran, "
        f"of operation {page.get('operation_id')}, on this page "
        f"({tail}):\n" + "\n".join(_dumps(i) for i in items)
    )
    return reply(page, text)


def _line(op: Operation) -> str:
    first = op["message"].split(". ")[0].rstrip(".")
    done = "done" if op["done"] else "NOT done"
    return (
        f"- {op['operation_id']} {op['provider']}/{op['kind']}: {op['status']} ({done}). {first}."
    )


def list_reply(page: OperationList, in_flight: int) -> CallToolResult:
    """Operations, those in flight first, one line each."""
    items = [with_tool(op) for op in page["items"]]
    head = (
        f"{in_flight} operation(s) in flight (NOT finished) on this page, listed first; "
        f"{len(items) - in_flight} done."
    )
    if page["next_cursor"]:
        head += f" More with cursor {page['next_cursor']}."
    structured = {"items": items, "next_cursor": page["next_cursor"], "in_flight": in_flight}
    return reply(structured, "\n".join([head, *(_line(op) for op in items)]))


def attention_reply(listing: Mapping[str, Any]) -> CallToolResult:
    """The attention inbox: what needs a human, and why."""
    items = listing.get("items") or []
    lines = [f"{len(items)} operation(s) need a human. Do not retry them yourself."]
    lines += [f"- {i['operation']['operation_id']}: {i['why']}" for i in items]
    return reply(listing, "\n".join(lines))
