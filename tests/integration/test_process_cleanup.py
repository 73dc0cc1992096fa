"""No process a test starts outlives it (tests/support/processes.py): a gateway that is
not healthy in time is killed before the wait raises, and whatever a test left running
is killed when it ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.processes import (
    Process,
    free_port,
    gateway_env,
    started_count,
    stop_started_since,
    wait_healthy,
)


def _serve(database_url: str, mock_url: str, tmp: Path) -> tuple[Process, str]:
    port = free_port()
    env = gateway_env(database_url, mock_url, tmp / "data")
    proc = Process(["serve", "--port", str(port), "--no-observer"], env, tmp / "gw.log").start()
    return proc, f"http://127.0.0.1:{port}"


def test_a_gateway_not_healthy_in_time_is_killed_before_the_wait_raises(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    proc, url = _serve(database_url, mock_url, tmp_path)
    with pytest.raises(TimeoutError, match="not healthy"):
        wait_healthy(url, proc, timeout=0.0)  # no gateway is healthy before it has started
    assert not proc.alive()
    assert proc.proc is not None and proc.proc.returncode is not None


def test_a_process_left_running_is_stopped_by_the_mark(
    database_url: str, mock_url: str, tmp_path: Path
) -> None:
    mark = started_count()
    proc, _ = _serve(database_url, mock_url, tmp_path)
    assert proc.alive()
    assert stop_started_since(mark) == [" ".join(proc.args)]  # what conftest does at the end
    assert not proc.alive()
    assert stop_started_since(mark) == []  # once
