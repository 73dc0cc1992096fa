"""Whatever the kill point, a restarted gateway resumes the operation from its record alone."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support.processes import gateway_env, gateway_process, post_operation
from tests.support.timing import PROCESS_WORK_S, budget

DEADLINES = {"create_seconds": 120, "result_seconds": 300, "cancel_seconds": 300}

# (kill point, scenario, cancel?, the end state after the restart)
POINTS = [
    ("after_intent_commit", {"name": "slow", "polls": 1}, False, "succeeded"),
    # The create was sent and answered, the answer never recorded:
    ("before_apply_create_pending", {"name": "slow", "polls": 1}, False, "succeeded"),
    # ... and the provider then breaks its contract: only a lookup can tell.
    (
        "before_apply_create_pending",
        {"name": "different_job_id", "list_delay": 1},
        False,
        "contract_violation",
    ),
    # A replay sent and answered with a second job (the provider breaks its token), the
    # answer never recorded; the restarted lookup lists only the first job (the second
    # is not listed yet): replaying again names the second, and both are named. (On a
    # loaded machine the lease may lapse before the replay is sent: then the one job is
    # found and `succeeded` is right, checked below by the provider's count.)
    (
        "before_apply_reconciling",
        {"name": "different_job_id", "list_delay": 2},
        False,
        ("contract_violation", "succeeded"),
    ),
    # ... and a provider that keeps its token answers the replay again with the same job.
    (
        "before_apply_reconciling",
        {"name": "lost_create_response", "list_delay": 2},
        False,
        "succeeded",
    ),
    # The first create refused as overloaded (nothing made): killed after recording that
    # proof, and after announcing the second create (which may or may not have gone).
    ("after_create_pending", {"name": "slow", "polls": 1, "overloaded": 1}, False, "succeeded"),
    ("after_create_resend", {"name": "slow", "polls": 1, "overloaded": 1}, False, "succeeded"),
    ("after_accepted", {"name": "slow", "polls": 1}, False, "succeeded"),
    ("after_create_unknown", {"name": "lost_create_response"}, False, "succeeded"),
    ("after_reconciling", {"name": "accept_then_5xx"}, False, "succeeded"),
    ("after_observing", {"name": "slow", "polls": 2}, False, "succeeded"),
    ("after_result_collecting", {"name": "slow", "polls": 1}, False, "succeeded"),
    # Decisions written together (docs/architecture.md, "What a step writes"): killed
    # before or inside the one transaction of `accepted -> observing` and the first status
    # read, or of `observing -> result_collecting -> succeeded` with the collected result.
    ("before_apply_accepted", {"name": "slow", "polls": 2}, False, "succeeded"),
    ("inside_apply_accepted", {"name": "slow", "polls": 2}, False, "succeeded"),
    ("before_apply_result_collecting", {"name": "slow", "polls": 1}, False, "succeeded"),
    ("inside_apply_observing", {"name": "slow", "polls": 1}, False, "succeeded"),
    ("after_cancel_requested", {"name": "never_finishes"}, True, "cancelled"),
    ("after_cancelling", {"name": "never_finishes"}, True, "cancelled"),
]


def _post(url: str, key: str, scenario: dict[str, Any]) -> httpx2.Response | None:
    body = {"provider": "mock", "kind": "report", "input": {"scenario": scenario}}
    return post_operation(url, key, {**body, "deadlines": DEADLINES})


@pytest.mark.parametrize(
    ("point", "scenario", "cancel", "end"), POINTS, ids=[f"{p[0]}-{p[1]['name']}" for p in POINTS]
)
def test_restart_resumes_from_the_record(
    point: str,
    scenario: dict[str, Any],
    cancel: bool,
    end: str | tuple[str, ...],
    database_url: str,
    mock_url: str,
    mock_client: httpx2.Client,
    tmp_path: Path,
) -> None:
    key = uuid.uuid4().hex
    crashing = gateway_env(database_url, mock_url, tmp_path / "data", crash_at=point)
    with gateway_process(crashing, tmp_path / "gw1.log") as (proc, url):
        r = _post(url, key, scenario)
        if r is not None and cancel:
            op_id = r.json()["operation_id"]
            try:
                httpx2.post(
                    f"{url}/v1/operations/{op_id}/cancel", json={"reason": "stop"}, timeout=10
                )
            except httpx2.TransportError:
                pass
        ends = time.monotonic() + budget(PROCESS_WORK_S)
        while proc.alive() and time.monotonic() < ends:
            time.sleep(0.05)
        assert not proc.alive(), f"the gateway never reached {point}"
    fresh = gateway_env(database_url, mock_url, tmp_path / "data")
    with gateway_process(fresh, tmp_path / "gw2.log") as (_, url):
        r = _post(url, key, scenario)  # the agent's retry: the same operation comes back
        assert r is not None and r.status_code == 200, r and r.text
        op_id = r.json()["operation_id"]
        final = httpx2.get(
            f"{url}/v1/operations/{op_id}/wait", params={"timeout": 20}, timeout=30
        ).json()
        assert final["state"] in ((end,) if isinstance(end, str) else end), final
        hist = httpx2.get(f"{url}/v1/operations/{op_id}/history").json()["items"]
    token = next(h["data"]["provider_token"] for h in hist if h["to_state"] == "create_pending")
    stats = mock_client.get("/_mock/stats", params={"token": token}).json()
    if final["state"] == "contract_violation":  # the provider made two; the gateway says so
        assert sorted(final["error"]["details"]["job_ids"]) == sorted(stats["jobs_by_token"][token])
        return
    assert len(stats["jobs_by_token"][token]) == 1
    by_ref = mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()
    assert by_ref["jobs_by_reference"][op_id] == stats["jobs_by_token"][token]
    job = stats["jobs_by_token"][token][0]
    assert stats["jobs"][job]["cancel_calls"] == (1 if cancel else 0)
