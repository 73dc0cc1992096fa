"""How many files of the gateway one mock create touches: a measure of how far a reader
has to follow one request (docs/architecture.md traces the same path by hand).

The mock provider runs as its own process (`jobgate mock-provider`); the gateway runs in
this process on the SQLite default in a temporary folder, called through ASGI. One
create warms every import and cache, then a second one is traced with `sys.setprofile`
from the request until its first steps are done (the create answers `done: false` or
settled; the background create task runs on the same loop). Only this thread is
traced: work sent to a thread (SQLite's occasional waits) is not counted. It prints the
count of distinct files under `app/`, by package, and with `--list` every file.

    .venv/bin/python bench/trace_files.py [--list]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app") + os.sep


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_mock(port: int, state: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "JOBGATE_MOCK_STATE_PATH": str(state)}
    jobgate = ROOT / ".venv" / "bin" / "jobgate"
    cmd = [str(jobgate), "mock-provider", "--port", str(port), "--no-access-log"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx2.get(f"http://127.0.0.1:{port}/_mock/stats", timeout=1)
            return proc
        except httpx2.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the mock provider did not start")


async def create(http: httpx2.AsyncClient) -> dict[str, Any]:
    body = {"provider": "mock", "kind": "report", "input": {"scenario": {"name": "slow"}}}
    r = await http.post("/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex})
    r.raise_for_status()
    return dict(r.json())


async def traced_create(mock_url: str, data_dir: Path) -> set[str]:
    os.environ.update(
        JOBGATE_DATA_DIR=str(data_dir), JOBGATE_MOCK_PROVIDER_URL=mock_url, JOBGATE_AUTH="dev"
    )
    from app.cli import main as cli_main
    from app.core.config import Settings
    from app.main import create_app

    cli_main(["migrate"])
    app = create_app(Settings(), run_observer=False)
    files: set[str] = set()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        name = frame.f_code.co_filename
        if name.startswith(APP):
            files.add(name[len(str(ROOT)) + 1 :])

    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            await create(http)  # warm-up: imports, caches, the first connection
            await app.state.ctx.background.drain()
            sys.setprofile(profile)
            try:
                made = await create(http)
                await app.state.ctx.background.drain()
            finally:
                sys.setprofile(None)
    assert made["operation_id"].startswith("op_"), made
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every file touched")
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        mock = start_mock(port, Path(tmp) / "mock.db")
        try:
            files = asyncio.run(traced_create(f"http://127.0.0.1:{port}", Path(tmp) / "data"))
        finally:
            mock.terminate()
            mock.wait(10)
    by_package = Counter(str(Path(f).parent) for f in files)
    print(f"files of app/ touched by one mock create: {len(files)}")
    for package, n in sorted(by_package.items()):
        print(f"  {package}: {n}")
    if args.list:
        for name in sorted(files):
            print(f"    {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
