"""Creates per second through the gateway vs directly against the mock provider.

Both run as real processes on loopback, measured in one run at the same
concurrency; prints the median of several rounds and the ratio.

    .venv/bin/python bench/create_overhead.py [--n 400] [--concurrency 16] [--rounds 5]
        [--database-url sqlite:///...|postgresql://...]

The bench's client is httpx2, the gateway's own library for its provider calls.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from e2e_probe import cpu_seconds
from http_clients import LIBRARIES, pooled

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.db.migrate import upgrade  # noqa: E402
from tests.support.processes import gateway_env, gateway_process, mock_process  # noqa: E402

BODY = {"provider": "mock", "kind": "report", "input": {"scenario": {"name": "fast"}}}


async def _rate(
    url: str, path: str, body: dict[str, object], n: int, conc: int, lib: str = LIBRARIES[0]
) -> float:
    sem = asyncio.Semaphore(conc)
    async with pooled(lib, url, conc, timeout=30) as client:

        async def one() -> None:
            async with sem:
                r = await client.post(
                    path, json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
                )
                assert r.status_code in (200, 202), r.text

        await asyncio.gather(*(one() for _ in range(conc)))  # warm connections
        t0 = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--database-url", default=None)
    ap.add_argument("--client", choices=LIBRARIES, default=LIBRARIES[0])
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="jobgate-bench-"))
    db_url = args.database_url or f"sqlite:///{tmp / 'bench.db'}"
    upgrade(db_url)
    with (
        mock_process(tmp) as mock_url,
        gateway_process(
            gateway_env(db_url, mock_url, tmp / "data", lease_seconds=30),
            tmp / "gateway.log",
            observer=False,
        ) as (gw, gw_url),
    ):
        assert gw.proc is not None
        direct, via, gw_cpu = [], [], []
        mock_body = {"kind": "report", "input": BODY["input"], "client_reference": "bench"}

        def rate(url: str, path: str, body: dict[str, object]) -> float:
            return asyncio.run(_rate(url, path, body, args.n, args.concurrency, args.client))

        for _ in range(args.rounds):
            direct.append(rate(mock_url, "/v1/jobs", mock_body))
            cpu0 = cpu_seconds(gw.proc.pid)
            via.append(rate(gw_url, "/v1/operations", BODY))
            # The warm-up's creates count too: args.concurrency of them.
            gw_cpu.append((cpu_seconds(gw.proc.pid) - cpu0) / (args.n + args.concurrency))
    d, g = statistics.median(direct), statistics.median(via)
    backend = "postgresql" if db_url.startswith("postgresql") else "sqlite"
    print(
        f"create_overhead backend={backend} n={args.n} concurrency={args.concurrency} "
        f"rounds={args.rounds} client={args.client}"
    )  # noqa: T201
    print(
        f"  direct to mock provider : median {d:8.1f} creates/s  "
        f"(rounds: {', '.join(f'{x:.0f}' for x in direct)})"
    )  # noqa: T201
    print(
        f"  through the gateway     : median {g:8.1f} creates/s  "
        f"(rounds: {', '.join(f'{x:.0f}' for x in via)})"
    )  # noqa: T201
    print(f"  ratio gateway/direct    : {g / d:.2f}")  # noqa: T201
    print(f"  gateway CPU per create  : median {1000 * statistics.median(gw_cpu):.2f} ms")  # noqa: T201


if __name__ == "__main__":
    main()
