"""`make run`: the mock provider and the gateway (with its observer) side by side.

Prints where they listen and a ready curl that starts and follows a mock
operation, last, once both answer; Ctrl-C stops both. Request logs are off (no uvicorn
access log, the HTTP client's per-request lines silenced): what remains is one line per
operation transition and provider call, and warnings.

The banner means it: both ports are checked free before anything starts, and the
gateway counts as up only when `/v1/healthz` answers as jobgate (`"service": "jobgate"`)
while the process this run started is alive. Anything that fails to start ends the run
with one line and a non-zero code (docs/operations.md, "Exit codes"); so does a child
that dies later.
"""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import sys
import time

import httpx2

HOST = os.environ.get("HOST", "127.0.0.1")
PORT = int(os.environ.get("PORT", "8080"))
MOCK_PORT = int(os.environ.get("MOCK_PORT", "8081"))
START_TIMEOUT_S = 120.0  # a first start migrates the SQLite default; slow machines take a while
FAILED = 1  # `make run` could not start, or a child died: the line printed says which


def fail(line: str) -> None:
    """One line on stderr, then exit non-zero."""
    print(f"make run: {line}", file=sys.stderr, flush=True)  # noqa: T201
    sys.exit(FAILED)


def require_free(host: str, port: int, variable: str) -> None:
    """Refuse a port another process listens on before starting anything."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            fail(
                f"port {port} on {host} is not free ({exc.strerror or exc}); "
                f"choose another: make run {variable}=<port>"
            )


def _answers(url: str, check: str) -> bool:
    try:
        reply = httpx2.get(url, timeout=1.0)
    except httpx2.HTTPError:
        return False
    if reply.status_code != 200:
        return False
    try:
        body = reply.json()
    except ValueError:
        return False
    if check == "jobgate":
        return isinstance(body, dict) and body.get("service") == "jobgate"
    return isinstance(body, dict)


def wait_up(url: str, proc: subprocess.Popen[bytes], name: str, check: str) -> None:
    """Until `url` answers as `check` says while `proc` lives; else one line and exit."""
    ends = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < ends:
        if proc.poll() is not None:
            fail(f"the {name} exited with code {proc.returncode} before answering; see above")
        if _answers(url, check):
            if proc.poll() is not None:  # someone else answered while ours was dying
                fail(f"the {name} exited with code {proc.returncode}; see above")
            return
        time.sleep(0.1)
    fail(f"the {name} did not answer at {url} within {START_TIMEOUT_S:.0f} s")


def main() -> int:
    """Start both, print the banner once both answer, run until Ctrl-C or a child dies."""
    require_free(HOST, PORT, "PORT")
    require_free("127.0.0.1", MOCK_PORT, "MOCK_PORT")
    env = dict(os.environ)
    mock_url = f"http://127.0.0.1:{MOCK_PORT}"
    env.setdefault("JOBGATE_MOCK_PROVIDER_URL", mock_url)
    # The mock signs its job webhooks and the gateway verifies them: one shared secret
    # for this run, so webhooks work out of the box.
    env.setdefault("JOBGATE_MOCK_WEBHOOK_URL", f"http://{HOST}:{PORT}/v1/webhooks/mock")
    env.setdefault(
        "JOBGATE_MOCK_WEBHOOK_SECRET", "whsec_" + base64.b64encode(os.urandom(24)).decode()
    )
    py = sys.executable
    children: list[subprocess.Popen[bytes]] = []
    try:
        mock = subprocess.Popen(
            [py, "-m", "app.cli", "mock-provider", "--port", str(MOCK_PORT), "--no-access-log"],
            env=env,
        )
        children.append(mock)
        wait_up(f"{mock_url}/_mock/stats", mock, "mock provider", "json")
        gateway = subprocess.Popen(
            [
                py,
                "-m",
                "app.cli",
                "serve",
                "--host",
                HOST,
                "--port",
                str(PORT),
                "--no-access-log",  # one line per transition instead; the banner stays in view
            ],
            env=env,
        )
        children.append(gateway)
        base = f"http://{HOST}:{PORT}"
        wait_up(f"{base}/v1/healthz", gateway, "gateway", "jobgate")
        print(banner(base, mock_url), flush=True)  # noqa: T201
        return run_until_stopped(gateway, mock)
    finally:
        for proc in children:
            if proc.poll() is None:
                proc.terminate()
        for proc in children:
            proc.wait(30)


def banner(base: str, mock_url: str) -> str:
    """What `make run` prints once both answer: where they are and a curl to try."""
    return f"""
jobgate is running.
  gateway + observer : {base}      (API docs: {base}/docs)
  mock provider      : {mock_url}   (counters: {mock_url}/_mock/stats)

Start a mock report job that takes three polls, then wait for its honest answer:

  OP=$(curl -s -X POST {base}/v1/operations \\
        -H 'Content-Type: application/json' -H "Idempotency-Key: demo-$RANDOM" \\
        -d '{{"provider":"mock","kind":"report","input":{{"scenario":{{"name":"slow","polls":3}}}}}}' \\
       | python3 -c 'import json,sys; b=json.load(sys.stdin); print(b["message"], file=sys.stderr); print(b["operation_id"])')
  curl -s "{base}/v1/operations/$OP/wait?timeout=60" | python3 -m json.tool

Ctrl-C stops everything.
"""


def run_until_stopped(gateway: subprocess.Popen[bytes], mock: subprocess.Popen[bytes]) -> int:
    """0 after Ctrl-C or SIGTERM; a child that dies on its own ends the run non-zero."""
    stop = False

    def _stop(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    while not stop:
        for name, proc in (("gateway", gateway), ("mock provider", mock)):
            if proc.poll() is not None:
                print(  # noqa: T201
                    f"make run: the {name} exited with code {proc.returncode}; see above",
                    file=sys.stderr,
                    flush=True,
                )
                return FAILED
        time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
