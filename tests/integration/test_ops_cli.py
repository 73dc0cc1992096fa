"""`jobgate ops ...` against a live gateway process (the real CLI, the real mock provider)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support.processes import Process, free_port, gateway_env, wait_healthy

START_BUDGET_S = 90.0  # a loaded CI box (2 cores, several suites) starts a gateway slowly


@contextmanager
def gateway(env: dict[str, str], log: Path) -> Iterator[str]:
    port = free_port()
    proc = Process(["serve", "--port", str(port), "--log-level", "warning"], env, log).start()
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc, timeout=START_BUDGET_S)
        yield url
    finally:
        proc.terminate()


@pytest.fixture(scope="module")
def live(
    module_database_url: str, mock_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """One gateway with its observer (dev auth: the caller is an admin), time scaled down."""
    tmp = tmp_path_factory.mktemp("ops")
    env = gateway_env(module_database_url, mock_url, tmp / "data")
    with gateway(env, tmp / "gateway.log") as url:
        yield url


def ops(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "ops", *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=90,
    )


def start(url: str, scenario: dict[str, Any], key: str | None = None) -> str:
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    r = httpx2.post(
        f"{url}/v1/operations",
        json={"provider": "mock", "kind": "report", "input": {"scenario": scenario}},
        headers=headers,
        timeout=30,
    )
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


def test_wait_show_and_list(live: str) -> None:
    op_id = start(live, {"name": "slow", "polls": 6})
    waited = ops("wait", op_id, "--url", live, "--json")
    assert waited.returncode == 0, waited.stderr
    assert json.loads(waited.stdout)["status"] == "succeeded"
    assert waited.stderr == ""  # no progress display when stderr is not a terminal

    shown = ops("show", op_id, JOBGATE_URL=live)  # the URL from the environment
    assert shown.returncode == 0, shown.stderr
    assert f"operation   {op_id}" in shown.stdout
    out = shown.stdout  # in every message: a failure under load must show the timeline
    # Seven status reads: those that showed something new are rows of their own, the rest
    # (nothing new, or progress written less than 5 s before) one counting row: `2xx`.
    assert re.search(r"polled 7x, running \(\d/\d\); answers: 200 x\d, 2xx x\d", out), out
    # The way into `accepted` is the gateway's business, not the CLI's: the create's own
    # answer, or reconciliation when a loaded box let the 0.5 s intake lease lapse
    # after the create was sent (the observer's claim fences the request's write out).
    assert re.search(r" (create_pending|reconciling) -> accepted: ", out), out
    assert "result_collecting -> succeeded" in out, out
    rows = int(re.search(r"timeline \((\d+) history rows", out).group(1))  # type: ignore[union-attr]
    lines = out.split("timeline", 1)[1].strip().splitlines()[1:]
    assert len(lines) < rows  # the polls' exchanges and observations fold into one line

    as_json = json.loads(ops("show", op_id, "--url", live, "--json").stdout)
    assert as_json["operation"]["operation_id"] == op_id and len(as_json["history"]) == rows

    listed = ops("list", "--url", live, "--provider", "mock")
    assert listed.returncode == 0
    header, *table = listed.stdout.splitlines()
    assert header.split()[:3] == ["OPERATION", "STATUS", "STATE"]
    assert any(line.startswith(op_id) and "succeeded" in line for line in table)
    start(live, {"name": "fast"})
    page = json.loads(ops("list", "--url", live, "--json", "--limit", "1").stdout)
    assert len(page["items"]) == 1 and page["next_cursor"]


def test_wait_that_times_out_then_cancel(live: str) -> None:
    op_id = start(live, {"name": "never_finishes"})
    waited = ops("wait", op_id, "--url", live, "--timeout", "0.2")
    assert waited.returncode == 3, waited.stdout + waited.stderr
    assert "IN PROGRESS" in waited.stdout  # the gateway's own words: still running
    cancelled = ops("cancel", op_id, "--url", live, "--reason", "no longer needed")
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.startswith(f"{op_id}: cancelling")
    final = ops("wait", op_id, "--url", live, "--json")
    assert final.returncode == 1  # done, but not succeeded
    assert json.loads(final.stdout)["status"] == "cancelled"


def test_attention_and_resolve(live: str) -> None:
    op_id = start(live, {"name": "corrupt_result"})
    assert ops("wait", op_id, "--url", live).returncode == 1  # needs attention
    inbox = ops("attention", "--url", live)
    assert inbox.returncode == 0
    line = next(x for x in inbox.stdout.splitlines() if x.startswith(op_id))
    assert "result_validation_failed" in line and "failed its checks" in line
    resolved = ops("resolve", op_id, "--url", live, "--decision", "abandon", "--reason", "bad data")
    assert resolved.returncode == 0, resolved.stderr
    assert "abandon recorded; now failed (abandoned)" in resolved.stdout
    assert op_id not in ops("attention", "--url", live).stdout
    shown = ops("show", op_id, "--url", live).stdout
    assert "result_validation_failed -> abandoned" in shown


def test_errors_are_one_line_and_exit_2(live: str) -> None:
    r = ops("show", "op_nope", "--url", live)
    assert r.returncode == 2 and r.stdout == ""
    assert (
        r.stderr.strip()
        == "jobgate ops: 404 operation_not_found: No operation 'op_nope' for this caller."
    )
    bad = ops("resolve", "op_nope", "--url", live, "--decision", "maybe", "--reason", "x")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_keys_from_the_environment(module_database_url: str, mock_url: str, tmp_path: Path) -> None:
    def key(name: str, role: str) -> str:
        made = subprocess.run(
            [sys.executable, "-m", "app.cli", "keys", "create", "--name", name, "--role", role],
            env={**os.environ, "JOBGATE_DATABASE_URL": module_database_url},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert made.returncode == 0, made.stderr
        return made.stdout.strip()

    suffix = uuid.uuid4().hex[:6]
    operator, agent = key(f"op-{suffix}", "operator"), key(f"ag-{suffix}", "agent")
    env = gateway_env(module_database_url, mock_url, tmp_path / "data", auth="keys")
    with gateway(env, tmp_path / "gw.log") as url:
        denied = ops("list", "--url", url)
        assert denied.returncode == 2 and "401" in denied.stderr
        assert "it needs an operator key" in denied.stderr and "--role operator`" in denied.stderr
        assert ops("list", "--url", url, JOBGATE_API_KEY=operator).returncode == 0
        op_id = start(url, {"name": "corrupt_result"}, key=agent)
        assert ops("wait", op_id, "--url", url, "--key", agent).returncode == 1
        forbidden = ops(
            "resolve", op_id, "--url", url, "--key", agent, "--decision", "abandon",
            "--reason", "agents may not",
        )  # fmt: skip
        assert forbidden.returncode == 2 and "403 forbidden" in forbidden.stderr
        assert agent not in forbidden.stderr + forbidden.stdout
