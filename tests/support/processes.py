"""Real jobgate processes for fault tests: start on a free port, SIGKILL, restart.

Every `Process` started is registered here, and `stop_started_since` kills the ones a
test started and left running: tests/conftest.py calls it when each test ends and when
the session ends, so no process outlives its test whatever happened (a gateway that
was not healthy in time included: `wait_healthy` kills it before it raises).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2

from tests.support.timing import PROCESS_START_S, budget

START_TIMEOUT_S = budget(PROCESS_START_S)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_STARTED: list[Process] = []  # every Process started in this interpreter, in order


def started_count() -> int:
    """How many processes were started so far (a mark for `stop_started_since`)."""
    return len(_STARTED)


def stop_started_since(mark: int) -> list[str]:
    """SIGKILL every process started after `mark` that still runs; their commands."""
    stopped = []
    for proc in _STARTED[mark:]:
        if proc.alive():
            proc.kill()
            stopped.append(" ".join(proc.args))
    del _STARTED[mark:]
    return stopped


class Process:
    """One `jobgate ...` subprocess with its own environment and log file."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.args = args
        self.env = env
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Process:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
        full_env.update(self.env)
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "app.cli", *self.args],
                env=full_env,
                stdout=fh,
                stderr=subprocess.STDOUT,
            )
        _STARTED.append(self)
        return self

    def wait_exit(self, timeout: float = START_TIMEOUT_S) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks, no lease release."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def terminate(self) -> int:
        """SIGTERM, then SIGKILL if it has not exited within 30 s: it never outlives this."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()
                raise
        return self.proc.returncode if self.proc else 0

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def wait_healthy(url: str, proc: Process, timeout: float = START_TIMEOUT_S) -> None:
    """Until `url` answers `/v1/healthz`; a process that is not healthy in time is
    killed before this raises (the caller may not own a `finally` yet)."""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        if not proc.alive():
            raise RuntimeError(f"process exited early; log:\n{proc.log.read_text()[-3000:]}")
        try:
            if httpx2.get(f"{url}/v1/healthz", timeout=1).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.05)
    proc.kill()
    raise TimeoutError(f"{url} not healthy; log:\n{proc.log.read_text()[-3000:]}")


def post_operation(url: str, key: str, body: dict[str, Any]) -> httpx2.Response | None:
    """An agent's create; None when the gateway died answering (the agent then retries
    with the same Idempotency-Key)."""
    try:
        return httpx2.post(
            f"{url}/v1/operations", json=body, headers={"Idempotency-Key": key}, timeout=10
        )
    except httpx2.TransportError:
        return None


def gateway_env(database_url: str, mock_url: str, data_dir: Path, **extra: Any) -> dict[str, str]:
    env = {
        "JOBGATE_DATABASE_URL": database_url,
        "JOBGATE_DATA_DIR": str(data_dir),
        "JOBGATE_MOCK_PROVIDER_URL": mock_url,
        "JOBGATE_AUTH": "dev",
        "JOBGATE_TIME_SCALE": "0.01",
        "JOBGATE_LEASE_SECONDS": "0.5",
        "JOBGATE_OBSERVER_INTERVAL_SECONDS": "0.05",
    }
    env.update({f"JOBGATE_{k.upper()}": str(v) for k, v in extra.items()})
    return env


@contextmanager
def gateway_process(
    env: dict[str, str], log: Path, *, observer: bool = True
) -> Iterator[tuple[Process, str]]:
    port = free_port()
    args = ["serve", "--port", str(port), "--log-level", "warning"]
    if not observer:
        args.append("--no-observer")
    proc = Process(args, env, log).start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        yield proc, url
    finally:
        proc.kill()


@contextmanager
def mock_process(tmp: Path, **env: str) -> Iterator[str]:
    """The mock provider in its own process (load tests: not sharing the test's GIL)."""
    port = free_port()
    proc_env = {"JOBGATE_MOCK_STATE_PATH": str(tmp / "mock-process.db"), **env}
    proc = Process(["mock-provider", "--port", str(port)], proc_env, tmp / "mock.log").start()
    url = f"http://127.0.0.1:{port}"
    try:
        ends = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                httpx2.get(f"{url}/_mock/stats", timeout=1)
                break
            except httpx2.HTTPError:
                if time.monotonic() > ends or not proc.alive():
                    log = proc.log.read_text()[-2000:]
                    raise RuntimeError(f"mock did not start:\n{log}") from None
                time.sleep(0.05)
        yield url
    finally:
        proc.kill()
