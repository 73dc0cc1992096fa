"""Real processes, killed with SIGKILL where it hurts most for single creation: after
the create went out and before its answer was recorded (and, for providers without a
token, after the intent was recorded and before the send: jobgate cannot tell these
two apart, so neither may lead to a second create)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support.processes import gateway_env, gateway_process, post_operation
from tests.support.single_create import MODES, PROFILES, PROMISED, exchanges, rows, transitions
from tests.support.timing import PROCESS_WORK_S, budget

SLOW = {"name": "slow", "polls": 1}

# (mode, kill point, create deadline in seconds, the end state, jobs at the provider)
CASES = [
    *((mode, "before_apply_create_pending", 120, PROMISED[mode], 1) for mode in sorted(MODES)),
    # Nothing was sent, but a restarted observer cannot know that: only the token
    # provider gets a create (its replay is safe); the others are never sent one.
    ("token", "after_intent_commit", 120, "succeeded", 1),
    ("lookup", "after_intent_commit", 1, "create_unconfirmed", 0),
    ("none", "after_intent_commit", 120, "create_unconfirmed", 0),
]


def _post(url: str, key: str, provider: str, create_s: int) -> httpx2.Response | None:
    deadlines = {"create_seconds": create_s, "result_seconds": 300}
    body = {"provider": provider, "kind": "report", "input": {"scenario": SLOW}}
    return post_operation(url, key, {**body, "deadlines": deadlines})


@pytest.mark.parametrize(
    ("mode", "point", "create_s", "end", "jobs"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES]
)
def test_a_kill_around_the_create_never_leads_to_a_second_job(
    mode: str,
    point: str,
    create_s: int,
    end: str,
    jobs: int,
    database_url: str,
    mock_url: str,
    mock_client: httpx2.Client,
    tmp_path: Path,
) -> None:
    key, provider = uuid.uuid4().hex, MODES[mode]
    env = gateway_env(database_url, mock_url, tmp_path / "data", profiles_dir=PROFILES)
    with gateway_process({**env, "JOBGATE_CRASH_AT": point}, tmp_path / "gw1.log") as (proc, url):
        assert _post(url, key, provider, create_s) is None
        ends = time.monotonic() + budget(PROCESS_WORK_S)
        while proc.alive() and time.monotonic() < ends:
            time.sleep(0.05)
        assert not proc.alive(), f"the gateway never reached {point}"
    with gateway_process(env, tmp_path / "gw2.log") as (_, url):
        r = _post(url, key, provider, create_s)
        assert r is not None and r.status_code == 200, r and r.text
        op_id = r.json()["operation_id"]
        final = httpx2.get(
            f"{url}/v1/operations/{op_id}/wait", params={"timeout": 20}, timeout=30
        ).json()
        items: list[dict[str, Any]] = httpx2.get(f"{url}/v1/operations/{op_id}/history").json()[
            "items"
        ]
    assert final["state"] == end, final
    assert final["guarantees"] == {"single_create": mode}
    by_ref = mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()
    assert len(by_ref["jobs_by_reference"].get(op_id, [])) == jobs
    path = transitions(items)
    assert path[:2] == ["create_pending", "create_unknown"], path
    resumed = next(i for i in items if i["to_state"] == "create_unknown")["cause"]
    assert "the create request died" in resumed or "deadline passed" in resumed, resumed
    # The dead process never recorded its send; a token provider alone gets a replay.
    sent = len(exchanges(items, "create"))
    assert sent == (1 if mode == "token" and point == "after_intent_commit" else 0)
    if mode != "token" and create_s > 1:  # past the deadline nobody resends: no refusal
        assert rows(items, "resend_refused"), "every refused resend is a history row"
    if end == "create_unconfirmed":
        details = final["error"]["details"]
        assert details["client_reference"] == op_id and details["single_create"] == mode


# The first create is refused as overloaded (proof that nothing was made); the process
# dies after announcing the second and before sending it. The tally no longer adds up,
# so the restarted observer treats the create as ambiguous: no mode sends blind.
# (mode, create deadline in seconds, the end state, jobs at the provider): the lookup
# mode looks until its short deadline and finds nothing, as nothing was sent.
RESEND_CASES = [("token", 120, "succeeded", 1), ("lookup", 3, "create_unconfirmed", 0)]
RESEND_CASES += [("none", 120, "create_unconfirmed", 0)]


@pytest.mark.parametrize(
    ("mode", "create_s", "end", "jobs"), RESEND_CASES, ids=[c[0] for c in RESEND_CASES]
)
def test_a_kill_after_announcing_another_create_makes_it_ambiguous(
    mode: str,
    create_s: int,
    end: str,
    jobs: int,
    database_url: str,
    mock_url: str,
    mock_client: httpx2.Client,
    tmp_path: Path,
) -> None:
    key, provider = uuid.uuid4().hex, MODES[mode]
    body = {
        "provider": provider,
        "kind": "report",
        "input": {"scenario": {**SLOW, "overloaded": 1}},
        "deadlines": {"create_seconds": create_s, "result_seconds": 300},
    }
    env = gateway_env(database_url, mock_url, tmp_path / "data", profiles_dir=PROFILES)
    crashing = {**env, "JOBGATE_CRASH_AT": "after_create_resend"}
    with gateway_process(crashing, tmp_path / "gw1.log") as (proc, url):
        post_operation(url, key, body)  # answered (create_pending) or cut off by the kill
        ends = time.monotonic() + budget(PROCESS_WORK_S)
        while proc.alive() and time.monotonic() < ends:
            time.sleep(0.05)
        assert not proc.alive(), "the gateway never announced the second create"
    with gateway_process(env, tmp_path / "gw2.log") as (_, url):
        r = post_operation(url, key, body)
        assert r is not None and r.status_code == 200, r and r.text
        op_id = r.json()["operation_id"]
        final = httpx2.get(
            f"{url}/v1/operations/{op_id}/wait", params={"timeout": 30}, timeout=40
        ).json()
        items: list[dict[str, Any]] = httpx2.get(f"{url}/v1/operations/{op_id}/history").json()[
            "items"
        ]
    assert final["state"] == end, final
    stats = mock_client.get("/_mock/stats", params={"client_reference": op_id}).json()
    assert stats["refused_by_reference"] == {op_id: 1}
    assert len(stats["jobs_by_reference"].get(op_id, [])) == jobs
    path = transitions(items)
    assert path[:3] == ["create_pending", "create_pending", "create_unknown"], path
    resumed = next(i for i in items if i["to_state"] == "create_unknown")["cause"]
    # (the short deadline may pass while the gateway restarts: the doubt is the same)
    assert "sending the create again died" in resumed or "deadline passed" in resumed, resumed
    assert len(rows(items, "create_resend")) == 1
    # Only the refused create was recorded; a token provider alone gets a replay.
    assert len(exchanges(items, "create")) == (2 if mode == "token" else 1)
