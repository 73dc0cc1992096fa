"""Fairness before work: one agent's latency while anonymous clients flood the gateway.

    .venv/bin/python bench/fairness.py [--clients 50] [--seconds 10] [--body-kb 240]
        [--gateway-root DIR] [--database-url ...] [--json]

A real gateway (`jobgate serve`, `JOBGATE_AUTH=keys`, SQLite unless `--database-url`)
and the mock provider, each its own process on loopback. One agent with a valid key
creates an operation (`fast`) and reads it back, again and again, for `--seconds`:
first alone (`quiet`), then while `--clients` anonymous clients (no key, in another
process) each post, as fast as the gateway answers them, a `--body-kb` body of nested
arrays (24 levels, as deep as the intake allows, and more values than it allows), so
each one, if parsed, costs the whole parse and check (`flood`). Printed: the agent's
p50 / p99 for a create and for a read in both phases, how many anonymous requests
were answered and with which status, and the gateway process's CPU seconds in each
phase (from /proc: Linux only).

`--gateway-root` runs the gateway from another checkout (e.g. one before the key was
checked first), for a before/after row. Runs in under 60 s with the defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.db.migrate import upgrade  # noqa: E402
from tests.support.processes import free_port, mock_process  # noqa: E402


def nested_body(kb: int) -> bytes:
    """A create body of about `kb` KiB: many arrays nested 24 deep."""
    one = "[" * 24 + "1" + "]" * 24
    rows = ",".join([one] * max(1, kb * 1024 // (len(one) + 1)))
    return ('{"provider": "mock", "kind": "report", "input": {"rows": [' + rows + "]}}").encode()


def _flood(url: str, clients: int, seconds: float, body: bytes, out: Any) -> None:
    """The anonymous clients (run in their own process, so they do not share the agent's
    interpreter): each posts `body` again as soon as it is answered. Plain sockets with
    the request prebuilt: on a small machine an HTTP client library would spend more CPU
    making the flood than the gateway spends answering it."""
    host, port = url.removeprefix("http://").split(":")
    head = (
        f"POST /v1/operations HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Type: application/json\r\nIdempotency-Key: flood\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    request = head + body

    async def run() -> Counter[str]:
        seen: Counter[str] = Counter()
        ends = time.monotonic() + seconds

        async def client() -> None:
            while time.monotonic() < ends:
                try:
                    reader, writer = await asyncio.open_connection(host, int(port))
                    try:
                        writer.write(request)
                        await writer.drain()
                    except ConnectionError:
                        pass  # answered and closed before the whole body was sent
                    answer = await reader.read(64)
                    seen[answer[9:12].decode() or "closed"] += 1
                    writer.close()
                except OSError as exc:
                    seen[type(exc).__name__] += 1

        try:  # a request still in flight at the end is abandoned, not waited for
            async with asyncio.timeout(seconds + 2):
                await asyncio.gather(*(client() for _ in range(clients)))
        except TimeoutError:
            seen["abandoned at the end"] += 1
        return seen

    out.put(dict(asyncio.run(run())))


def _agent(url: str, key: str, seconds: float) -> dict[str, list[float]]:
    took: dict[str, list[float]] = {"create": [], "read": []}
    body = {"provider": "mock", "kind": "report", "input": {"scenario": {"name": "fast"}}}
    auth = {"Authorization": f"Bearer {key}"}
    ends = time.monotonic() + seconds
    with httpx2.Client(base_url=url, timeout=60, headers=auth) as http:
        while time.monotonic() < ends:
            t0 = time.perf_counter()
            r = http.post(
                "/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
            )
            took["create"].append(time.perf_counter() - t0)
            assert r.status_code in (200, 202), r.text
            op_id = r.json()["operation_id"]
            t0 = time.perf_counter()
            got = http.get(f"/v1/operations/{op_id}")
            took["read"].append(time.perf_counter() - t0)
            assert got.status_code == 200, got.text
    return took


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000, 1)


def _summary(took: dict[str, list[float]]) -> dict[str, Any]:
    return {
        f"{kind}_{name}": value
        for kind, values in took.items()
        for name, value in (
            ("n", len(values)),
            ("p50_ms", round(statistics.median(values) * 1000, 1) if values else None),
            ("p99_ms", _ms(values, 0.99) if values else None),
        )
    }


def _cpu_seconds(pid: int) -> float:
    """User + system CPU the process has used (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _gateway(root: Path, env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
    with log.open("ab") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port), "--log-level",
             "warning"],
            env={**clean, **env, "PYTHONPATH": str(root)},
            cwd=root,
            stdout=fh,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    ends = time.monotonic() + 60
    while time.monotonic() < ends and proc.poll() is None:
        try:
            if httpx2.get(f"{url}/v1/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx2.HTTPError:
            pass
        time.sleep(0.05)
    proc.kill()
    proc.wait(10)
    raise RuntimeError(f"gateway not healthy; log:\n{log.read_text()[-2000:]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=7.0)
    ap.add_argument("--body-kb", type=int, default=240)
    ap.add_argument("--gateway-root", type=Path, default=ROOT)
    ap.add_argument("--database-url", default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="jobgate-fairness-"))
    db_url = args.database_url or f"sqlite:///{tmp / 'bench.db'}"
    upgrade(db_url)
    body = nested_body(args.body_kb)
    with mock_process(tmp) as mock_url:
        env = {
            "JOBGATE_DATABASE_URL": db_url,
            "JOBGATE_DATA_DIR": str(tmp / "data"),
            "JOBGATE_MOCK_PROVIDER_URL": mock_url,
            "JOBGATE_AUTH": "keys",
            "JOBGATE_TIME_SCALE": "0.01",
        }
        made = subprocess.run(
            [sys.executable, "-m", "app.cli", "keys", "create", "--name", "agent", "--role",
             "agent"],
            env={**os.environ, **env}, capture_output=True, text=True, check=True, timeout=60,
        )  # fmt: skip
        key = made.stdout.strip()
        proc, url = _gateway(args.gateway_root, env, tmp / "gateway.log")
        try:
            cpu0 = _cpu_seconds(proc.pid)
            quiet = _summary(_agent(url, key, args.seconds))
            cpu1 = _cpu_seconds(proc.pid)
            out: Any = multiprocessing.get_context("spawn").Queue()
            flood = multiprocessing.get_context("spawn").Process(
                target=_flood, args=(url, args.clients, args.seconds + 1, body, out)
            )
            flood.start()
            time.sleep(1.0)  # every anonymous client connected and sending
            try:
                cpu2 = _cpu_seconds(proc.pid)
                loaded = _summary(_agent(url, key, args.seconds))
                anonymous = out.get(timeout=120)
                cpu3 = _cpu_seconds(proc.pid)
            finally:
                flood.join(30)
                if flood.is_alive():
                    flood.kill()
        finally:
            proc.kill()
            proc.wait(10)
    row = {
        "gateway_root": str(args.gateway_root),
        "clients": args.clients,
        "body_bytes": len(body),
        "quiet": quiet,
        "flood": loaded,
        "anonymous_answers": anonymous,
        "gateway_cpu_s": {"quiet": round(cpu1 - cpu0, 2), "flood": round(cpu3 - cpu2, 2)},
    }
    if args.json:
        print(json.dumps(row))  # noqa: T201
        return
    print(  # noqa: T201
        f"fairness: {args.clients} anonymous clients, {len(body)} B nested bodies, "
        f"{args.seconds:g} s per phase, gateway from {args.gateway_root}"
    )
    for name, s in (("quiet", quiet), ("flood", loaded)):
        print(  # noqa: T201
            f"  {name:<6} agent create p50 {s['create_p50_ms']} ms p99 {s['create_p99_ms']} ms "
            f"(n={s['create_n']}); read p50 {s['read_p50_ms']} ms p99 {s['read_p99_ms']} ms"
        )
    print(f"  anonymous answers: {anonymous}")  # noqa: T201
    cpu = row["gateway_cpu_s"]
    print(f"  gateway CPU: quiet {cpu['quiet']} s, flood {cpu['flood']} s")  # noqa: T201


if __name__ == "__main__":
    main()
