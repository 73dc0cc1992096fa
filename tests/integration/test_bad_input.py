"""Bad requests get a JSON error with a stable code, and nothing is written."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.conftest import Gateway


async def _nothing_written(gw: Gateway) -> None:
    r = await gw.http.get("/v1/operations")
    assert r.json()["items"] == []


def _key() -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex, "Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        (b"{not json", 400, "malformed_json"),
        (b'{"provider": "nope", "kind": "report", "input": {}}', 422, "unknown_provider"),
        (b'{"provider": "mock", "kind": "nope", "input": {}}', 422, "unknown_kind"),
        # a bundled profile whose credential (OPENAI_API_KEY) is not set on this gateway
        (
            b'{"provider": "openai_batch", "kind": "batch", "input": {}}',
            422,
            "provider_unavailable",
        ),
        (b'{"provider": "mock", "kind": "report", "input": "text"}', 422, "invalid_request"),
        (b'{"provider": "mock", "kind": "report"}', 422, "invalid_request"),
        (
            b'{"provider": "mock", "kind": "report", "input": {}, "extra": 1}',
            422,
            "invalid_request",
        ),
        (
            b'{"provider": "mock", "kind": "report", "input": {}, "deadlines": '
            b'{"result_seconds": -5}}',
            422,
            "invalid_request",
        ),
        (b"[1, 2]", 422, "invalid_request"),
    ],
)
async def test_bad_create_bodies(gateway: Gateway, payload: bytes, status: int, code: str) -> None:
    r = await gateway.http.post("/v1/operations", content=payload, headers=_key())
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert r.json()["error"]["code"] == code
    assert r.json()["error"]["message"]
    await _nothing_written(gateway)


async def test_oversized_body_is_413(gateway: Gateway) -> None:
    big: dict[str, Any] = {
        "provider": "mock",
        "kind": "report",
        "input": {"blob": "x" * (300 * 1024)},
    }
    r = await gateway.http.post("/v1/operations", json=big, headers=_key())
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "body_too_large"
    await _nothing_written(gateway)


async def test_unknown_operation_is_json_404(gateway: Gateway) -> None:
    r = await gateway.http.get("/v1/operations/op_nope")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "operation_not_found"
    r = await gateway.http.get("/v1/nowhere")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


async def test_bad_list_filters(gateway: Gateway) -> None:
    for params, code in [
        ({"state": "bogus"}, "unknown_state"),
        ({"status": "x"}, "unknown_status"),
        ({"cursor": "!!"}, "invalid_cursor"),
        ({"label": "nokv"}, "invalid_label"),
    ]:
        r = await gateway.http.get("/v1/operations", params=params)
        assert r.status_code in (400, 422)
        assert r.json()["error"]["code"] == code
