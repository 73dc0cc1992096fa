"""An HTTP transport for MCP clients of the gateway's `/mcp`: a gateway that is down is a
tool error with words, never a lost session.

The official MCP client (`mcp.client.streamable_http`) lets a connection error of one
call end its whole session, so an agent that called while the gateway restarted could
make no further call. Give its `httpx2.AsyncClient` this transport and such a call
answers like any refused tool call instead: `isError: true`, the code
`gateway_unavailable`, and words saying to make the same call again (the same
`idempotency_key` for `start_operation`: nothing starts twice). The session stays, and
the next call reaches the gateway once it is back.

```python
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from jobgate_client.mcp_http import ToolErrorWhenDown

async with httpx2.AsyncClient(transport=ToolErrorWhenDown(), headers=...) as http:
    async with Client(streamable_http_client(url + "/mcp", http_client=http)) as mcp:
        ...
```

Needs `httpx2` (which the MCP SDK brings); nothing here imports the gateway.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

# HTTP answers that mean "no gateway behind this address right now" (a proxy's, or the
# gateway's own while its MCP server starts or stops).
DOWN_STATUSES = frozenset({502, 503, 504})
SERVER_ERROR = -32000  # JSON-RPC: implementation-defined server error

WORDS = (
    "The jobgate gateway could not be reached ({why}). Nothing here says whether the "
    "call took effect. Make the same call again in a few seconds, with the same "
    "arguments (for start_operation the same idempotency_key: the work never starts "
    "twice); an operation already started goes on in the gateway meanwhile."
)


class ToolErrorWhenDown(httpx2.AsyncBaseTransport):
    """Wraps a transport (by default `httpx2.AsyncHTTPTransport()`); a JSON-RPC request
    that cannot reach the gateway gets a JSON-RPC answer made here: a tool error for
    `tools/call`, an error for any other method, nothing for a notification."""

    def __init__(self, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self._inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.TransportError as exc:
            why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            return _stand_in(request, why)
        if response.status_code in DOWN_STATUSES and request.method == "POST":
            await response.aread()
            if not _is_jsonrpc(response):
                await response.aclose()
                return _stand_in(request, f"HTTP {response.status_code}")
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def _is_jsonrpc(response: httpx2.Response) -> bool:
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("jsonrpc") == "2.0"


def _stand_in(request: httpx2.Request, why: str) -> httpx2.Response:
    """The answer the gateway would have given had it been there to refuse the call."""
    message = _message_of(request)
    if request.method != "POST" or message is None or "id" not in message:
        return httpx2.Response(202, request=request)  # a notification: nothing to answer
    words = WORDS.format(why=why)
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if message.get("method") == "tools/call":
        reply["result"] = {
            "content": [{"type": "text", "text": words}],
            "structuredContent": {"error": {"code": "gateway_unavailable", "message": words}},
            "isError": True,
            "resultType": "complete",  # a final answer (MCP 2026 results name their kind)
        }
    else:
        reply["error"] = {"code": SERVER_ERROR, "message": words}
    return httpx2.Response(200, json=reply, request=request)


def _message_of(request: httpx2.Request) -> dict[str, Any] | None:
    try:
        body = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return None
    return body if isinstance(body, dict) else None
