"""Log lines name the operation and its trace, one per transition, and never a secret."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from typing import Any

import httpx2
import pytest

from app.core.obs.logs import QUIET, JsonFormatter, TextFormatter, bind, configure
from tests.conftest import Gateway

TOKEN = "mock-token-SEKRIT-4f1c9a"  # the provider credential the gateway sends
WEBHOOK_SECRET = "whsec_" + "c2VrcmV0LXdlYmhvb2stc2VjcmV0LWtleS0xMjM0NQ=="


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"mock_provider_token": TOKEN, "mock_webhook_secret": WEBHOOK_SECRET}


async def test_provider_calls_and_transitions_carry_ids_and_no_secret(
    gateway: Gateway, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    created = (await gateway.start({"name": "slow", "polls": 2})).json()
    op_id, trace_id = created["operation_id"], created["trace_id"]
    body = await gateway.run_until_done(op_id)
    assert body["state"] == "succeeded"
    ours = [r for r in caplog.records if getattr(r, "op_id", None) == op_id]

    calls = [r for r in ours if getattr(r, "event", None) == "provider_call"]
    assert {r.call for r in calls} >= {"create", "status", "result"}  # type: ignore[attr-defined]
    assert all(r.trace_id == trace_id for r in calls)  # type: ignore[attr-defined]

    # One INFO line per transition, matching history row for row.
    history = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    moves = [(h["from_state"], h["to_state"]) for h in history if h["kind"] == "transition"]
    lines = [r for r in ours if getattr(r, "event", None) == "transition"]
    assert [(r.from_state, r.to_state) for r in lines] == moves  # type: ignore[attr-defined]
    assert all(r.levelno == logging.INFO and r.trace_id == trace_id for r in lines)  # type: ignore[attr-defined]

    # The credential was sent (history records the header, redacted) ...
    sent = [h["data"] for h in history if h["kind"] == "exchange"]
    assert any("authorization" in {k.lower() for k in d["request_headers"]} for d in sent)
    rendered = [JsonFormatter().format(r) for r in caplog.records]
    rendered += [TextFormatter().format(r) for r in caplog.records]
    assert any(op_id in line for line in rendered)
    # ... and no log line, in either format, holds it or the webhook secret.
    for line in rendered:
        assert TOKEN not in line and WEBHOOK_SECRET not in line
        assert "SEKRIT" not in line


def test_json_lines_and_text_lines_show_the_bound_operation() -> None:
    out = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        configure("INFO", "json", stream=out)
        with bind("op_X", "tr_Y"):
            logging.getLogger("jobgate.test").info("hello %s", "there")
        logging.getLogger("jobgate.test").info("not about an operation")
        configure("INFO", "text", stream=out)
        with bind("op_X", "tr_Y"):
            logging.getLogger("jobgate.test").warning("readable")
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    first, second, third = out.getvalue().splitlines()
    entry = json.loads(first)
    assert entry["msg"] == "hello there" and entry["level"] == "INFO"
    assert entry["op_id"] == "op_X" and entry["trace_id"] == "tr_Y"
    assert "op_id" not in json.loads(second)
    assert third.endswith("WARNING readable  [op_id=op_X trace_id=tr_Y]")


def test_the_http_clients_own_request_lines_are_silenced() -> None:
    """A provider call logs the gateway's line only: the client library's "HTTP Request"
    INFO line would repeat it (and name the full URL, query included)."""
    out = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    quiet = {name: logging.getLogger(name).level for name in QUIET}

    async def call() -> None:
        transport = httpx2.MockTransport(lambda request: httpx2.Response(200))
        async with httpx2.AsyncClient(transport=transport) as client:
            await client.get("http://provider.test/v1/jobs/1?token=abc")

    try:
        configure("INFO", "json", stream=out)
        asyncio.run(call())
        logging.getLogger("jobgate.test").info("after the call")
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        for name, level in quiet.items():
            logging.getLogger(name).setLevel(level)
    lines = out.getvalue().splitlines()
    assert [json.loads(line)["msg"] for line in lines] == ["after the call"], lines
