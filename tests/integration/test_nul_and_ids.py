"""NUL, odd ids and hostile webhook fields are a 4xx on both databases, never a 500.

PostgreSQL refuses NUL in text parameters: once a `%00` in an operation
id, a `provider=` or `trace_id=` filter or a cancel reason reached the driver and
answered 500. Signed webhooks with a lone-surrogate job id or a body nested 5,000
deep did too.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from sqlalchemy import func, select

from app.operations.domain.models import HistoryEntry, OperationTable
from app.webhooks.models import WebhookEvent
from jobgate_fakes.mock.webhooks import signed_headers, webhook_body
from tests.conftest import Gateway

SECRET = "whsec_" + base64.b64encode(b"jobgate-test-webhook-secret-0001").decode()
BAD_IDS = ["op_%00x", "%00", "x" * 500, "op_%C0%80", "op_%ED%BF%BF"]
PER_OPERATION = [
    ("GET", ""),
    ("GET", "/wait?timeout=0"),
    ("POST", "/cancel"),
    ("GET", "/result"),
    ("GET", "/errors"),
    ("GET", "/history"),
    ("GET", "/events"),
    ("POST", "/resolve"),
]


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"mock_webhook_secret": SECRET}


async def _counts(gw: Gateway) -> list[int]:
    async with gw.ctx.db.transaction() as session:
        return [
            (await session.execute(select(func.count()).select_from(table))).scalar_one()
            for table in (OperationTable, HistoryEntry, WebhookEvent)
        ]


@pytest.mark.parametrize("op_id", BAD_IDS)
async def test_malformed_operation_ids_are_simply_not_found(gateway: Gateway, op_id: str) -> None:
    await gateway.start({"name": "sync"})
    for method, tail in PER_OPERATION:
        body = {"decision": "abandon", "reason": "x"} if tail == "/resolve" else None
        body = {} if body is None and method == "POST" else body  # a JSON body, as dev mode asks
        r = await gateway.http.request(method, f"/v1/operations/{op_id}{tail}", json=body)
        assert r.status_code == 404, (method, tail, r.text)
        assert r.json()["error"]["code"] == "operation_not_found"
    r = await gateway.http.get(f"/operations/{op_id}")
    assert r.status_code == 404 and "operation_not_found" in r.text


async def test_nul_in_list_filters_is_a_4xx(gateway: Gateway) -> None:
    await gateway.start({"name": "sync"})
    for name in ("provider", "trace_id", "label"):
        value = "k=\x00" if name == "label" else "mo\x00ck"
        r = await gateway.http.get("/v1/operations", params={name: value})
        assert r.status_code == 422, r.text
        assert r.json()["error"]["code"] == "invalid_value"
        assert r.json()["error"]["details"] == {"reason": "nul", "parameter": name}
        page = await gateway.http.get("/operations", params={name: value})
        assert page.status_code == 422 and "invalid_value" in page.text
    for name, code in (("state", "unknown_state"), ("status", "unknown_status")):
        r = await gateway.http.get("/v1/operations", params={name: "x\x00"})
        assert r.status_code == 422 and r.json()["error"]["code"] == code


async def test_nul_in_an_operator_form_is_a_4xx_and_records_nothing(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    before = await _counts(gateway)
    r = await gateway.http.post(
        f"/operations/{op_id}/cancel",
        content=b"reason=stop%00now",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 422 and "invalid_value" in r.text
    assert await _counts(gateway) == before


async def _webhook(gw: Gateway, body: str, msg_id: str = "evt_1") -> Any:
    headers = signed_headers(SECRET, msg_id, body, gw.clock.now())
    return await gw.http.post("/v1/webhooks/mock", content=body.encode(), headers=headers)


async def test_signed_webhooks_with_hostile_fields_are_4xx(gateway: Gateway) -> None:
    r = await gateway.start({"name": "never_finishes"})
    job_id = r.json()["remote_job_id"]
    before = await _counts(gateway)

    r = await _webhook(gateway, webhook_body("\udfff", "running", (1, 2)))
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"] == {
        "reason": "unpaired_surrogate",
        "pointer": "/data/job_id",
    }
    r = await _webhook(gateway, webhook_body(job_id, "run\x00ning", (1, 2)))
    assert r.status_code == 422 and r.json()["error"]["details"]["pointer"] == "/type"
    deep = '{"type":"job.running","data":' + "[" * 5000 + "]" * 5000 + "}"
    r = await _webhook(gateway, deep)
    assert r.status_code == 400 and r.json()["error"]["code"] == "malformed_json"
    r = await _webhook(gateway, webhook_body(job_id, "running", (1, 2)), msg_id="evt\x00")
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"] == {"reason": "nul", "parameter": "webhook-id"}
    big = '{"data":{"job_id":"' + job_id + '","progress":{"completed":' + "9" * 40 + "}}}"
    r = await _webhook(gateway, big)
    assert r.status_code == 422 and r.json()["error"]["details"]["pointer"] == (
        "/data/progress/completed"
    )
    assert await _counts(gateway) == before
    # The same event, sane, is still accepted: nothing above was recorded as seen.
    r = await _webhook(gateway, webhook_body(job_id, "running", (1, 2)))
    assert r.status_code == 202 and r.json()["status"] == "accepted"
