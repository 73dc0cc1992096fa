"""A Python adapter through the real driver: what YAML cannot count is counted, what it
cannot build is built, and a partial success it reveals is never reported as success."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import Gateway
from tests.support.scripted_provider import create_app, profile_yaml
from tests.support.servers import serve_app
from tests.unit.test_adapter import COUNTING


@pytest.fixture(scope="module")
def scripted_url() -> Iterator[str]:
    with serve_app(create_app()) as url:
        yield url


@pytest.fixture
def gateway_settings(
    scripted_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    text = profile_yaml("docs", itemless=True, inline=True) + "adapter: docs\n"
    (profiles / "docs.yaml").write_text(text)
    (profiles / "docs.py").write_text(COUNTING)
    monkeypatch.setenv("JOBGATE_SCRIPTED_URL", scripted_url)
    return {"profiles_dir": profiles}


async def _run(gateway: Gateway, docs: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    script = {"final": {"state": "succeeded", "docs": docs}}
    r = await gateway.http.post(
        "/v1/operations",
        json={"provider": "docs", "kind": "run", "input": script},
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert r.status_code == 202, r.text
    op_id = r.json()["operation_id"]
    await gateway.run_until_done(op_id, step=60.0)
    body = (await gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 1})).json()
    return op_id, body


async def test_failed_entries_the_adapter_counts_make_it_completed_with_errors(
    gateway: Gateway, scripted_url: str
) -> None:
    docs = [{"uri": "gs://b/a.pdf", "code": 0}, {"uri": "gs://b/b.pdf", "code": 3}]
    op_id, body = await _run(gateway, docs)
    assert body["outcome"] == "completed_with_errors", body
    assert "may report success" not in body["message"].lower()
    assert body["result_summary"] == {
        "processed": 2,
        "succeeded": 1,
        "failed": 1,
        "not_processed": 0,
    }
    errors = (await gateway.http.get(f"/v1/operations/{op_id}/errors")).json()["items"]
    assert [e["item"]["id"] for e in errors] == ["gs://b/b.pdf"]
    # The adapter built the create body: the provider received it wrapped, with the kind.
    job = body["remote_job_id"]
    received = httpx2.get(f"{scripted_url}/jobs/{job}/received").json()
    assert received["kind"] == "run" and "final" in received["wrapped"]


async def test_every_entry_succeeded_is_success(gateway: Gateway) -> None:
    _, body = await _run(gateway, [{"uri": "gs://b/a.pdf", "code": 0}])
    assert body["outcome"] == "succeeded", body


async def test_no_entries_counted_is_never_success(gateway: Gateway) -> None:
    _, body = await _run(gateway, [])
    assert body["outcome"] == "failed", body
    assert body["error"]["code"] == "no_items"
