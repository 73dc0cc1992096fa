"""Result collection: large results go to the file store; single-use endpoints are called once."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import rfc8785

from tests.conftest import Gateway

MOCK_PROFILE = Path(__file__).resolve().parents[2] / "app/providers/profiles/mock.yaml"


@pytest.fixture
def gateway_settings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An extra profile: the mock, but its result endpoint must not be called twice."""
    extra = tmp_path_factory.mktemp("profiles")
    text = MOCK_PROFILE.read_text().replace("name: mock\n", "name: mock-once\n", 1)
    text = text.replace("safe_to_repeat: true", "safe_to_repeat: false")
    assert "safe_to_repeat: false" in text
    (extra / "mock-once.yaml").write_text(text)
    return {"profiles_dir": extra, "inline_result_max_bytes": 4096}


async def test_a_large_result_is_stored_by_hash_and_served_whole(gateway: Gateway) -> None:
    r = await gateway.start({"name": "fast", "result_bytes": 50_000})
    final = await gateway.run_until_done(r.json()["operation_id"])
    assert final["status"] == "succeeded"
    assert final["result"] is None and final["result_url"]  # linked, not inline
    res = (await gateway.http.get(final["result_url"])).json()
    raw = rfc8785.dumps(res["result"])
    assert res["size"] == len(raw) > 50_000
    assert res["sha256"] == hashlib.sha256(raw).hexdigest()
    stored = gateway.ctx.results.path_for(res["sha256"])
    assert stored.read_bytes() == raw


async def test_a_single_use_result_endpoint_is_called_once(gateway: Gateway) -> None:
    r = await gateway.http.post(
        "/v1/operations",
        json={
            "provider": "mock-once",
            "kind": "report",
            "input": {"scenario": {"name": "result_unavailable", "polls": 1}},
        },
        headers={"Idempotency-Key": "once-1"},
    )
    op_id = r.json()["operation_id"]
    final = await gateway.run_until_done(op_id)
    assert final["state"] == "result_unavailable"
    token = await gateway.token_of(op_id)
    job = gateway.stats(token)["jobs_by_token"][token][0]
    assert gateway.stats(token)["jobs"][job]["result_calls"] == 1
