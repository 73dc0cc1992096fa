"""Every bad value in a body gets a 4xx with its JSON pointer, and nothing is written.

Regression tests for what the input fuzzing found: a lone surrogate in a label (committed, then
500 for every list), numbers outside I-JSON, NaN/Infinity, deep nesting, NUL in a
cancel reason or a resolve field.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from sqlalchemy import func, select

from app.operations.domain.models import HistoryEntry, OperationTable
from tests.conftest import Gateway

FAST = {"scenario": {"name": "fast"}}


def _body(**over: Any) -> dict[str, Any]:
    return {"provider": "mock", "kind": "report", "input": FAST, **over}


def _raw(value: Any) -> bytes:
    """JSON as an agent's buggy encoder might write it: NaN allowed, surrogates escaped."""
    return json.dumps(value, allow_nan=True).encode()


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


async def _rows(gw: Gateway) -> tuple[int, int]:
    async with gw.ctx.db.transaction() as session:
        ops = (await session.execute(select(func.count()).select_from(OperationTable))).scalar_one()
        hist = (await session.execute(select(func.count()).select_from(HistoryEntry))).scalar_one()
    return ops, hist


async def _post(gw: Gateway, raw: bytes, key: str | None = None) -> Any:
    headers = {"Idempotency-Key": key or uuid.uuid4().hex, "Content-Type": "application/json"}
    return await gw.http.post("/v1/operations", content=raw, headers=headers)


async def test_lone_surrogate_label_is_422_and_nothing_is_written(gateway: Gateway) -> None:
    raw = _raw(_body(labels={"team": "\udfff"}))
    key = uuid.uuid4().hex
    for _ in range(2):  # the retry with the same key gets the same clear answer, not a 500
        r = await _post(gateway, raw, key)
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        assert error["code"] == "invalid_value"
        assert error["details"] == {"reason": "unpaired_surrogate", "pointer": "/labels/team"}
    assert await _rows(gateway) == (0, 0)
    assert (await gateway.http.get("/v1/operations")).status_code == 200
    assert (await gateway.http.get("/v1/attention")).status_code == 200


@pytest.mark.parametrize(
    ("raw", "pointer", "reason"),
    [
        (_raw(_body(input={"n": 2**53})), "/input/n", "number_out_of_range"),
        (_raw(_body(input={"n": -(2**53)})), "/input/n", "number_out_of_range"),
        (b'{"provider":"mock","kind":"report","input":{"n":1e400}}', "/input/n", None),
        (b'{"provider":"mock","kind":"report","input":{"n":' + b"7" * 5000 + b"}}",
         "/input/n", None),
        (_raw(_body(input={"s": "a\udfffb"})), "/input/s", "unpaired_surrogate"),
        (_raw(_body(input={"k\x00": 1})), "/input/k\x00", "nul"),
        (_raw(_body(input={"s": ["ok", "x\x00"]})), "/input/s/1", "nul"),
        (_raw(_body(approval={"by": "\x00"})), "/approval/by", "nul"),
        (_raw(_body(provider="mo\x00ck")), "/provider", "nul"),
        (_raw(_body(callback_url="https://example.com/\udfff")), "/callback_url", None),
        (b'{"provider":"mock","kind":"report","input":{},"deadlines":{"result_seconds":1e999}}',
         "/deadlines/result_seconds", "number_out_of_range"),
    ],
)  # fmt: skip
async def test_values_outside_the_rules_are_422_with_their_pointer(
    gateway: Gateway, raw: bytes, pointer: str, reason: str | None
) -> None:
    r = await _post(gateway, raw)
    assert r.status_code == 422, r.text
    details = r.json()["error"]["details"]
    assert r.json()["error"]["code"] == "invalid_value" and details["pointer"] == pointer
    assert reason is None or details["reason"] == reason
    assert await _rows(gateway) == (0, 0)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"provider":"mock","kind":"report","input":{"n":NaN}}',
        b'{"provider":"mock","kind":"report","input":{"n":Infinity}}',
        b'{"provider":"mock","kind":"report","input":{"n":-Infinity}}',
        b'{"provider":"mock","kind":"report","input":{"deep":' + _nested(5000).encode() + b"}}",
    ],
)
async def test_what_json_parsing_would_mishandle_is_malformed_json(
    gateway: Gateway, raw: bytes
) -> None:
    r = await _post(gateway, raw)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "malformed_json"
    assert await _rows(gateway) == (0, 0)


async def test_input_nested_hundreds_deep_is_refused_at_intake(gateway: Gateway) -> None:
    """It used to be accepted and then fail every observer step with RecursionError."""
    raw = b'{"provider":"mock","kind":"report","input":{"deep":' + _nested(600).encode() + b"}}"
    r = await _post(gateway, raw)
    assert r.status_code == 422, r.text
    details = r.json()["error"]["details"]
    assert details["reason"] == "too_deep"
    assert details["pointer"] == "/input/deep" + "/0" * 30  # the 33rd level from the body
    assert await _rows(gateway) == (0, 0)


async def test_nul_in_a_cancel_reason_is_422_and_records_nothing(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    before = await _rows(gateway)
    r = await gateway.http.post(f"/v1/operations/{op_id}/cancel", json={"reason": "stop\x00"})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"] == {"reason": "nul", "pointer": "/reason"}
    assert await _rows(gateway) == before
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["status"] == "processing"  # no cancel intent was recorded


async def test_nul_in_resolve_fields_is_422_and_records_nothing(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "different_job_id"})).json()["operation_id"]
    await gateway.run_until_done(op_id)
    before = await _rows(gateway)
    for body, pointer in (
        ({"decision": "abandon", "reason": "no\x00"}, "/reason"),
        ({"decision": "accept_job", "reason": "ok", "remote_job_id": "j\x00"}, "/remote_job_id"),
    ):
        r = await gateway.http.post(f"/v1/operations/{op_id}/resolve", json=body)
        assert r.status_code == 422, r.text
        assert r.json()["error"]["details"]["pointer"] == pointer
    assert await _rows(gateway) == before
