"""`make run` and `jobgate serve` fail in one line when they cannot start, and the banner
means the gateway answered (docs/operations.md, "Exit codes").

Real processes: `python -m app.devrun` (what `make run` starts after `jobgate migrate`)
and `jobgate serve`, with a socket of this test holding the port.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import httpx2
import pytest

from app import devrun
from tests.support.processes import START_TIMEOUT_S, free_port

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def held_port() -> Iterator[int]:
    """A port another process (this test) listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
    env.update(
        JOBGATE_AUTH="dev",
        JOBGATE_DATA_DIR=str(tmp_path / "data"),
        JOBGATE_MOCK_STATE_PATH=str(tmp_path / "mock.db"),
    )
    env.update(extra)
    return env


def _devrun(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "app.devrun"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_make_run_on_a_taken_port_fails_in_one_line_and_starts_nothing(tmp_path: Path) -> None:
    with held_port() as port:
        proc = _devrun(_env(tmp_path, PORT=str(port), MOCK_PORT=str(free_port())))
        out, err = proc.communicate(timeout=START_TIMEOUT_S)
    assert proc.returncode != 0
    assert "jobgate is running" not in out
    [line] = err.strip().splitlines()
    assert f"port {port} on 127.0.0.1 is not free" in line and "make run PORT=" in line
    assert not (tmp_path / "mock.db").exists()  # the mock never started either


def test_make_run_on_a_taken_mock_port_names_mock_port(tmp_path: Path) -> None:
    with held_port() as port:
        proc = _devrun(_env(tmp_path, PORT=str(free_port()), MOCK_PORT=str(port)))
        out, err = proc.communicate(timeout=START_TIMEOUT_S)
    assert proc.returncode != 0 and "jobgate is running" not in out
    [line] = err.strip().splitlines()
    assert f"port {port} on 127.0.0.1 is not free" in line and "make run MOCK_PORT=" in line


def test_make_run_prints_no_banner_when_the_gateway_refuses_to_start(tmp_path: Path) -> None:
    # A configured database nobody migrated: the gateway refuses (exit 3) after the
    # ports were found free; the run ends non-zero, names it, and never says "running".
    never_migrated = f"sqlite:///{tmp_path / 'empty.db'}"
    env = _env(
        tmp_path,
        PORT=str(free_port()),
        MOCK_PORT=str(free_port()),
        JOBGATE_DATABASE_URL=never_migrated,
    )
    proc = _devrun(env)
    out, err = proc.communicate(timeout=START_TIMEOUT_S * 2)
    assert proc.returncode != 0, out + err
    assert "jobgate is running" not in out
    assert "not starting: the database was never migrated" in err
    ours = [line for line in err.splitlines() if line.startswith("make run:")]
    assert ours == ["make run: the gateway exited with code 3 before answering; see above"]


def test_make_run_prints_its_banner_once_the_gateway_answers_and_stops_cleanly(
    tmp_path: Path,
) -> None:
    port = free_port()
    proc = _devrun(_env(tmp_path, PORT=str(port), MOCK_PORT=str(free_port())))
    try:
        assert proc.stdout is not None
        lines: list[str] = []
        timer = threading.Timer(START_TIMEOUT_S * 2, proc.kill)
        timer.start()
        for line in proc.stdout:
            lines.append(line)
            if "Ctrl-C stops everything." in line:
                break
        timer.cancel()
        assert "jobgate is running (dev mode)." in "".join(lines), "".join(lines)
        health = httpx2.get(f"http://127.0.0.1:{port}/v1/healthz", timeout=5).json()
        assert health == {"ok": True, "service": "jobgate"}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert proc.returncode == 0


def test_serve_on_a_taken_port_exits_4_before_touching_the_database(tmp_path: Path) -> None:
    with held_port() as port:
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            cwd=tmp_path,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
        )
    assert done.returncode == 4, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"jobgate: not starting: cannot listen on 127.0.0.1:{port}")
    assert not (tmp_path / "data").exists()  # the SQLite default was not even migrated


def test_serve_on_a_database_not_ready_exits_3(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(free_port())],
        cwd=tmp_path,
        env=_env(tmp_path, JOBGATE_DATABASE_URL=f"sqlite:///{tmp_path / 'empty.db'}"),
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
    )
    assert done.returncode == 3, done.stderr
    assert "not starting: the database was never migrated" in done.stderr


class _NotJobgate(BaseHTTPRequestHandler):
    """Another server on the port: 200 and JSON on /v1/healthz, but not jobgate's."""

    def do_GET(self) -> None:
        body = json.dumps({"ok": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def other_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _NotJobgate)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_another_server_answering_healthz_does_not_count_as_jobgate(other_server: str) -> None:
    assert not devrun._answers(f"{other_server}/v1/healthz", "jobgate")
    assert devrun._answers(f"{other_server}/v1/healthz", "json")


def _banner(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    lines: list[str] = []
    timer = threading.Timer(START_TIMEOUT_S * 2, proc.kill)
    timer.start()
    for line in proc.stdout:
        lines.append(line)
        if "Ctrl-C stops everything." in line:
            break
    timer.cancel()
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # never a full pipe
    return "".join(lines)


def _banner_commands(text: str) -> str:
    """The shell lines the banner tells a person to paste."""
    start = text.index("then wait for its honest answer:")
    return text[start : text.index("Ctrl-C stops everything.")].split("\n", 1)[1]


def _paste(commands: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", commands],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=START_TIMEOUT_S * 2,
    )  # fmt: skip


@pytest.mark.parametrize("auth", ["dev", "keys"])
def test_the_banner_curl_works_in_the_mode_it_runs_in(auth: str, tmp_path: Path) -> None:
    fast = {"JOBGATE_TIME_SCALE": "0.01", "JOBGATE_OBSERVER_INTERVAL_SECONDS": "0.05"}
    for run in ("first", "again"):
        env = _env(tmp_path, PORT=str(free_port()), MOCK_PORT=str(free_port()), **fast)
        env["JOBGATE_AUTH"] = auth
        proc = _devrun(env)
        try:
            text = _banner(proc)
            assert f"jobgate is running ({auth} mode)." in text, text
            done = _paste(_banner_commands(text), tmp_path)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "Traceback" not in done.stderr and '"outcome": "succeeded"' in done.stdout
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=60)
        keys_file = tmp_path / "data" / devrun.KEYS_FILE
        if auth == "dev":
            assert "Bearer" not in text and not keys_file.exists()
            return
        assert oct(keys_file.stat().st_mode & 0o777) == "0o600"
        # A second run of the same data directory reuses its keys instead of minting more.
        assert f"This run {'created' if run == 'first' else 'reused'} two keys" in text
        assert "/login" in text and "jgk_" not in text  # names the keys, never prints them


def test_a_refused_key_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """The banner's parser on an error body (the keyless curl against keys mode was a
    `KeyError: 'message'` traceback)."""
    body = json.dumps({"error": {"code": "unauthorized", "message": "An API key is required"}})
    done = subprocess.run(
        ["python3", "-c", devrun.SHOW_ID], input=body, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == "An API key is required"


def test_killing_its_parent_stops_the_gateway_and_the_mock(tmp_path: Path) -> None:
    """`kill <make's pid>` never reaches `app.devrun`: it notices its parent is gone and
    stops both children instead of leaving them on their ports."""
    port, mock_port = free_port(), free_port()
    env = _env(tmp_path, PORT=str(port), MOCK_PORT=str(mock_port))
    wrapper = (
        "import subprocess, sys; "
        "subprocess.Popen([sys.executable, '-m', 'app.devrun']).wait()"
    )  # a stand-in for make: it starts devrun and is killed without passing anything on
    parent = subprocess.Popen(
        [sys.executable, "-c", wrapper], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert "jobgate is running" in _banner(parent)
        assert httpx2.get(f"http://127.0.0.1:{port}/v1/healthz", timeout=5).status_code == 200
    finally:
        parent.kill()  # SIGKILL: nothing forwarded, as when make is killed
        parent.wait(30)
    ends = time.monotonic() + START_TIMEOUT_S
    while any(_listening(p) for p in (port, mock_port)):
        assert time.monotonic() < ends, "the gateway or the mock outlived make"
        time.sleep(0.2)


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True
