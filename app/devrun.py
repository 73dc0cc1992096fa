"""`make run`: the mock provider and the gateway (with its observer) side by side.

Prints where they listen and a ready curl that starts and follows a mock
operation, last, once both answer; Ctrl-C stops both. Request logs are off (no uvicorn
access log, the HTTP client's per-request lines silenced): what remains is one line per
operation transition and provider call, and warnings.
"""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time

import httpx2

HOST = os.environ.get("HOST", "127.0.0.1")
PORT = int(os.environ.get("PORT", "8080"))
MOCK_PORT = int(os.environ.get("MOCK_PORT", "8081"))


def _wait(url: str, proc: subprocess.Popen[bytes], name: str) -> None:
    for _ in range(200):
        if proc.poll() is not None:
            sys.exit(f"{name} exited with {proc.returncode}; see its output above")
        try:
            httpx2.get(url, timeout=0.5)
            return
        except httpx2.HTTPError:
            time.sleep(0.1)
    sys.exit(f"{name} did not start at {url}")


def main() -> None:
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
    mock = subprocess.Popen(
        [py, "-m", "app.cli", "mock-provider", "--port", str(MOCK_PORT), "--no-access-log"],
        env=env,
    )
    _wait(f"{mock_url}/_mock/stats", mock, "mock provider")
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
    base = f"http://{HOST}:{PORT}"
    _wait(f"{base}/v1/healthz", gateway, "gateway")
    print(
        f"""
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
""",
        flush=True,
    )  # noqa: T201
    stop = False

    def _stop(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    while not stop and gateway.poll() is None and mock.poll() is None:
        time.sleep(0.2)
    for proc in (gateway, mock):
        if proc.poll() is None:
            proc.terminate()
    for proc in (gateway, mock):
        proc.wait(30)


if __name__ == "__main__":
    main()
