"""One HTTP client's CPU per request, httpx against httpx2, at several concurrencies.

Each library's AsyncClient, and `jobgate` (the gateway's own httpx2 client,
app/providers/outbound.py, whose pool checks idle connections with one poll), POSTs
creates to the bundled mock provider (its own process) from this process, `--n`
requests at each concurrency, after a warm-up that opens the pool; prints requests/s
and this process's user and system CPU per request. This is why the gateway's provider
calls use httpx2 (see pyproject.toml) through its own client.

    .venv/bin/python bench/http_client_cost.py [--n 1500] [--concurrency 1,16,32,64]
        [--rounds 1]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from http_clients import LIBRARIES, pooled  # noqa: E402

from tests.support.processes import mock_process  # noqa: E402

ORDER = (*reversed(LIBRARIES), "jobgate")  # httpx first: the table reads before, after
BODY = {"kind": "report", "input": {"scenario": {"name": "fast"}}, "client_reference": "bench"}


async def measure(lib: str, url: str, n: int, conc: int) -> tuple[float, float, float]:
    """(requests/s, user ms per request, system ms per request) of one client."""
    async with pooled(lib, url, conc, timeout=30) as client:
        sem = asyncio.Semaphore(conc)

        async def one() -> None:
            async with sem:
                r = await client.post(
                    "/v1/jobs", json=BODY, headers={"Idempotency-Key": uuid.uuid4().hex}
                )
                r.raise_for_status()

        await asyncio.gather(*(one() for _ in range(conc)))  # the pool, opened
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        r1, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - t0
    return n / wall, (r1.ru_utime - r0.ru_utime) * 1000 / n, (r1.ru_stime - r0.ru_stime) * 1000 / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1500)
    ap.add_argument("--concurrency", default="1,16,32,64")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    results: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="jobgate-http-") as tmp, mock_process(Path(tmp)) as url:
        for _ in range(args.rounds):
            for conc in levels:
                for lib in ORDER:  # alternating, so a drift of the machine hits both
                    got = asyncio.run(measure(lib, url, args.n, conc))
                    results.setdefault((lib, conc), []).append(got)
    print(f"http_client_cost: {args.n} POSTs to the mock per run, {args.rounds} round(s), medians")
    print(f"{'concurrency':>11} {'library':>8} {'req/s':>8} {'user ms':>8} {'sys ms':>7}")
    for conc in levels:
        for lib in ORDER:
            runs = results[(lib, conc)]
            rate, user, system = (statistics.median(r[k] for r in runs) for k in range(3))
            print(f"{conc:>11} {lib:>8} {rate:>8.0f} {user:>8.3f} {system:>7.3f}")
        httpx_user = statistics.median(r[1] for r in results[("httpx", conc)])
        httpx2_user = statistics.median(r[1] for r in results[("httpx2", conc)])
        ours = statistics.median(r[1] for r in results[("jobgate", conc)])
        print(f"{'':>11} {'ratio':>8} {'':>8} {httpx2_user / httpx_user:>8.2f}  (httpx2 / httpx)")
        print(f"{'':>11} {'ratio':>8} {'':>8} {ours / httpx2_user:>8.2f}  (jobgate / httpx2)")


if __name__ == "__main__":
    main()
