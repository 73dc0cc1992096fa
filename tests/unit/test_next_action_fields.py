"""`next_action` field by field on every body kind (every state and variant the lexicon
test renders): `method`, `path` and `query` say what `call` says, and over MCP `tool`
and `arguments` are a call the tool's own input schema accepts."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlencode

import pytest

from app.mcp import replies, tools
from app.operations.contract import actions
from app.operations.contract.presenter import to_body
from jobgate_client import AsyncClient
from tests.support.operation_rows import NOW
from tests.support.operation_rows import an_operation as _op
from tests.unit.test_lexicon import CASES


def _schemas() -> dict[str, dict[str, Any]]:
    def connect(ctx: Any) -> AsyncClient:
        raise AssertionError("no call is made")

    server = tools.build_server(connect)
    listed = asyncio.run(server.list_tools())
    return {t.name: t.input_schema for t in listed}


SCHEMAS = _schemas()


def _check(action: dict[str, Any], op_id: str, *, mcp: bool) -> None:
    query = action["query"]
    rebuilt = f"{action['method']} {action['path']}" + (f"?{urlencode(query)}" if query else "")
    assert rebuilt == action["call"]
    assert action["method"] in ("GET", "POST") and action["path"].startswith("/v1/")
    if not mcp:
        assert action["tool"] is None and action["arguments"] is None
        return
    schema = SCHEMAS[action["tool"]]
    args = action["arguments"]
    assert set(args) <= set(schema["properties"]), (args, schema)
    assert set(schema.get("required", [])) <= set(args), (args, schema)
    if "operation_id" in schema["properties"]:
        assert args["operation_id"] == op_id
    if query:  # the same query, as the tool's arguments
        assert all(args[k] == v for k, v in query.items())


@pytest.mark.parametrize(("label", "fields", "waited", "notice"), CASES, ids=[c[0] for c in CASES])
def test_next_action_fields_on_every_body(
    label: str, fields: dict[str, Any], waited: bool, notice: float | None
) -> None:
    op = _op(**fields)
    for mcp in (False, True):
        body = to_body(op, NOW, waited=waited, mcp=mcp, notice_s=notice).model_dump(mode="json")
        if body["next_action"] is not None:
            _check(body["next_action"], op.id, mcp=mcp)
        # The MCP server fills the same fields from a body without them (an older gateway).
        bare = dict(body)
        if body["next_action"] is not None:
            bare["next_action"] = {"call": body["next_action"]["call"]}
            filled = replies.with_tool(bare)["next_action"]  # type: ignore[arg-type]
            assert filled is not None
            _check({"tool": None, "arguments": None, "query": None, **filled}, op.id, mcp=True)


def test_the_mcp_wait_default_is_the_tools() -> None:
    assert actions.MCP_WAIT_SECONDS == tools.WAIT_DEFAULT_S
    props = SCHEMAS["wait_for_operation"]["properties"]
    assert props["timeout_seconds"]["default"] == actions.MCP_WAIT_SECONDS


def test_a_call_with_a_query_is_split() -> None:
    assert actions.split_call("GET /v1/operations/op_1/errors?limit=50") == (
        "GET",
        "/v1/operations/op_1/errors",
        {"limit": 50},
    )
    assert actions.split_call("GET /v1/attention") == ("GET", "/v1/attention", None)


def test_poll_advice_never_exceeds_the_polling_cap() -> None:
    """A row an observer holds shows its lease expiry as the next read; the advice to an
    agent stays within the profile's longest gap between two reads."""
    from datetime import timedelta

    from app.operations.contract.presenter import MIN_POLL_AFTER, poll_after
    from app.operations.domain.states import State

    held = _op(State.OBSERVING, next_poll_at=NOW + timedelta(seconds=27))
    assert poll_after(held, NOW) == 27
    assert poll_after(held, NOW, 6.0) == 6
    assert poll_after(held, NOW, 1.2) == MIN_POLL_AFTER  # never below the minimum
    assert to_body(held, NOW, notice_s=6.0).poll_after_seconds == 6
