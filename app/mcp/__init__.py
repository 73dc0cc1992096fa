"""The MCP server: jobgate's REST API as MCP tools (`/mcp` on the gateway, or stdio).

It depends only on `jobgate_client` and the `mcp` SDK, never on the operation
machinery, so it can run beside any gateway (`stdio.py`) or inside one (`http.py`).
"""
