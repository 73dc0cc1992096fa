"""A ready function-calling tool: one JSON schema, and the function that runs it.

```python
from jobgate_client import Client
from jobgate_client.tool import TOOL, anthropic_tool, openai_tool, run_tool

tools = [openai_tool()]          # or [anthropic_tool()]
# ... the model calls "run_long_job" with arguments ...
reply = run_tool(client, arguments)  # {"message": ..., "outcome": ..., "operation": {...}}
```

The tool starts the job and waits (bounded) with `start_and_wait`; `message` is the
gateway's plain words, and the rest is the structured body to act on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from jobgate_client.client import AsyncClient, Client
from jobgate_client.errors import ApiError, GatewayUnavailable, UsageError
from jobgate_client.outcomes import CompletedWithErrors, Outcome, Succeeded
from jobgate_client.types import FailedItem, JsonValue, Operation

TOOL_NAME = "run_long_job"
DEFAULT_MAX_WAIT_S = 120.0
MAX_WAIT_CAP_S = 600.0  # one tool call never holds longer than this

# Shared with the MCP server's start_operation: the one explanation of the key.
IDEMPOTENCY_KEY_ADVICE = (
    "idempotency_key is REQUIRED. Choose one per piece of work (for example the task id "
    "plus a step name) and send the SAME key again when you retry this same work, after "
    "an error or a timeout: the gateway then returns the existing operation instead of "
    "starting the work twice. Use a NEW key only for new work (a changed input with an "
    "old key is refused with idempotency_key_reused)."
)

TOOL_DESCRIPTION = (
    "Run a long job at a provider through the jobgate gateway and wait for it (up to "
    "max_wait_seconds). Returns `outcome` (succeeded, completed_with_errors, failed, "
    "cancelled, needs_attention, or still_running with the operation id to check later) "
    "and `message`, plain words saying whether the work is finished and what to do next: "
    "report success only when outcome is succeeded. " + IDEMPOTENCY_KEY_ADVICE
)

TOOL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "provider": {"type": "string", "description": "provider profile, e.g. 'mock'"},
        "kind": {"type": "string", "description": "job kind at that provider, e.g. 'report'"},
        "input": {
            "type": "object",
            "description": "the provider's input (a JSON object); gateway options never go in it",
        },
        "idempotency_key": {
            "type": "string",
            "minLength": 1,
            "maxLength": 255,
            "description": IDEMPOTENCY_KEY_ADVICE,
        },
        "max_wait_seconds": {
            "type": "number",
            "minimum": 0,
            "maximum": MAX_WAIT_CAP_S,
            "description": f"how long to wait before answering still_running "
            f"(default {DEFAULT_MAX_WAIT_S:g})",
        },
    },
    "required": ["provider", "kind", "input", "idempotency_key"],
    "additionalProperties": False,
}

TOOL: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": TOOL_DESCRIPTION,
    "parameters": TOOL_PARAMETERS,
}


def openai_tool() -> dict[str, Any]:
    """The tool as an OpenAI Chat Completions `tools` entry."""
    return {"type": "function", "function": dict(TOOL)}


def anthropic_tool() -> dict[str, Any]:
    """The tool as an Anthropic Messages `tools` entry."""
    return {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": TOOL_PARAMETERS}


class ToolReply(TypedDict, total=False):
    """What the tool returns to the model: words first, then the structure."""

    message: str
    outcome: str
    operation_id: str | None
    operation: Operation | None
    result: JsonValue
    failed_items: list[FailedItem]
    error: dict[str, Any]


def _arguments(args: Mapping[str, Any]) -> tuple[str, str, dict[str, Any], str, float]:
    """The checked arguments; UsageError names the one that is wrong."""
    for name in ("provider", "kind", "idempotency_key"):
        if not isinstance(args.get(name), str) or not args[name]:
            raise UsageError(f"`{name}` is required and must be a non-empty string")
    if not isinstance(args.get("input"), dict):
        raise UsageError("`input` is required and must be a JSON object")
    wait = args.get("max_wait_seconds", DEFAULT_MAX_WAIT_S)
    if isinstance(wait, bool) or not isinstance(wait, int | float) or wait < 0:
        raise UsageError("`max_wait_seconds` must be a number >= 0")
    return (
        args["provider"],
        args["kind"],
        args["input"],
        args["idempotency_key"],
        min(float(wait), MAX_WAIT_CAP_S),
    )


def reply_for(outcome: Outcome) -> ToolReply:
    """The tool's answer for an outcome."""
    reply: ToolReply = {
        "message": outcome.message,
        "outcome": outcome.kind,
        "operation_id": outcome.operation_id,
        "operation": outcome.operation,
    }
    if isinstance(outcome, Succeeded | CompletedWithErrors):
        reply["result"] = outcome.result
    if isinstance(outcome, CompletedWithErrors):
        reply["failed_items"] = outcome.failed_items
    return reply


def refusal(exc: UsageError | ApiError | GatewayUnavailable) -> ToolReply:
    """A refused call in words the model can act on (fix the arguments, or retry)."""
    if isinstance(exc, ApiError):
        error: dict[str, Any] = {"code": exc.code, "message": exc.message, "details": exc.details}
        words = f"The call was REFUSED ({exc.code}): {exc.message} Nothing was started."
    elif isinstance(exc, GatewayUnavailable):
        error = {"code": "gateway_unavailable", "message": str(exc)}
        words = (
            f"The gateway could not be reached ({exc}). It is unknown whether the job "
            "started: call this tool again with the SAME idempotency_key; that never "
            "starts it twice."
        )
    else:
        error = {"code": "invalid_arguments", "message": str(exc)}
        words = f"The arguments are wrong: {exc}. Nothing was started."
    return {"message": words, "outcome": "refused", "operation_id": None, "error": error}


def run_tool(client: Client, arguments: Mapping[str, Any]) -> ToolReply:
    """Run the tool with the sync client; refusals come back as a reply, not raised."""
    try:
        provider, kind, input_, key, wait = _arguments(arguments)
        return reply_for(client.start_and_wait(provider, kind, input_, key, wait))
    except (UsageError, ApiError, GatewayUnavailable) as exc:
        return refusal(exc)


async def arun_tool(client: AsyncClient, arguments: Mapping[str, Any]) -> ToolReply:
    """Run the tool with the async client; refusals come back as a reply, not raised."""
    try:
        provider, kind, input_, key, wait = _arguments(arguments)
        return reply_for(await client.start_and_wait(provider, kind, input_, key, wait))
    except (UsageError, ApiError, GatewayUnavailable) as exc:
        return refusal(exc)
