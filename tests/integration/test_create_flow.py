"""Intake through the real HTTP path against the real mock provider."""

from __future__ import annotations

from tests.conftest import Gateway


async def test_fast_job_is_processing_then_succeeds(gateway: Gateway) -> None:
    r = await gateway.start({"name": "fast"})
    assert r.status_code == 202, r.text
    body = r.json()
    assert r.headers["location"] == f"/v1/operations/{body['operation_id']}"
    assert body["done"] is False
    assert body["status"] == "processing"
    assert "is IN PROGRESS" in body["message"] and "Do not report an outcome yet" in body["message"]
    assert body["poll_after_seconds"] >= 1
    assert body["remote_job_id"]
    final = await gateway.run_until_done(body["operation_id"])
    assert final["status"] == "succeeded", final
    assert final["result"] is not None
