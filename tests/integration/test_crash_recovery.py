"""Real process kills: a restarted gateway resumes operations from their records alone."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx2
import pytest

from tests.support.processes import gateway_env, gateway_process

BODY = {
    "provider": "mock",
    "kind": "report",
    "input": {"scenario": {"name": "slow", "polls": 2}},
    "deadlines": {"create_seconds": 120, "result_seconds": 300},
}


def test_crash_after_intent_commit_resumes_with_the_same_token(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    log = tmp_path / "gateway.log"
    crashing = gateway_env(
        database_url, mock_url, tmp_path / "data", crash_at="after_intent_commit"
    )
    with gateway_process(crashing, log) as (proc, url):
        with pytest.raises(httpx2.TransportError):
            httpx2.post(
                f"{url}/v1/operations",
                json=BODY,
                headers={"Idempotency-Key": uuid.uuid4().hex},
                timeout=10,
            )
        proc.wait_exit()
    # The intent survived the kill, and nothing was sent to the provider.
    with gateway_process(
        gateway_env(database_url, mock_url, tmp_path / "data"), log, observer=False
    ) as (_, url):
        ops = httpx2.get(f"{url}/v1/operations").json()["items"]
        assert len(ops) == 1 and ops[0]["state"] == "create_pending"
        op_id = ops[0]["operation_id"]
        hist = httpx2.get(f"{url}/v1/operations/{op_id}/history").json()["items"]
        token = hist[0]["data"]["provider_token"]
        assert (
            mock_client.get("/_mock/stats", params={"token": token}).json()["creates_by_token"]
            == {}
        )
    # A restart with an observer finishes it once the dead request's lease lapses.
    with gateway_process(gateway_env(database_url, mock_url, tmp_path / "data"), log) as (_, url):
        final = httpx2.get(
            f"{url}/v1/operations/{op_id}/wait", params={"timeout": 15}, timeout=20
        ).json()
        assert final["outcome"] == "succeeded", final
    stats = mock_client.get("/_mock/stats", params={"token": token}).json()
    assert stats["creates_by_token"] == {token: 1}
    assert stats["jobs_by_token"][token] == [final["remote_job_id"]]
    by_ref = mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()
    assert by_ref["jobs_by_reference"][op_id] == [final["remote_job_id"]]
