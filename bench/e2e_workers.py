"""The two contenders of `bench/end_to_end.py` that are not jobgate, each run in its own process.

    python bench/e2e_workers.py ceiling '<json spec>'   # plain asyncio + HTTP client, no durability
    python bench/e2e_workers.py dbos '<json spec>'      # DBOS Transact (needs the `bench` extra)

Both do what jobgate does for an agent: create a job at the mock provider under an
idempotency key, wait the profile's first delay, read its status until it is terminal
(waiting the provider's poll hint between reads, times the shared time scale), then
fetch the result and check its RFC 8785 sha256. Each runs a warm-up batch first,
then prints one JSON line with the timed phase's figures (wall time, per-job
latencies, CPU of this process) on stdout. The spec is written by `end_to_end.py`;
its `client` names the HTTP client library both use for the provider's calls (httpx2,
as the gateway does).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import rfc8785
from e2e_probe import CommitCounter, cpu_seconds, pg_xact, runq_wait_seconds
from http_clients import LIBRARIES, pooled

WARMUP_OFFSET = 1_000_000  # warm-up jobs are numbered from here, timed ones from 0
TERMINAL = frozenset({"succeeded", "succeeded_partial", "failed", "cancelled"})
# Idle time before reading pg_stat_database: PostgreSQL 15 publishes a backend's counts
# when it goes idle, but no more than once a second; a backend idled within a second of
# its last report publishes after PGSTAT_IDLE_INTERVAL (10 s), or when it exits.
PG_SETTLE_SECONDS = 11.0


def check_result(body: dict[str, Any]) -> None:
    """The same check jobgate's `checksum: sha256_rfc8785` makes on the mock's result."""
    digest = hashlib.sha256(rfc8785.dumps(body["data"])).hexdigest()
    if digest != body["sha256"]:
        raise RuntimeError(f"result checksum mismatch for {body.get('job_id')}")


def provider_client(spec: dict[str, Any]) -> Any:
    """An AsyncClient of the spec's HTTP library (httpx2 or httpx) on the mock, pooled for
    the spec's concurrency."""
    return pooled(spec.get("client", LIBRARIES[0]), spec["mock_url"], spec["concurrency"], 30)


async def drive(
    n: int, concurrency: int, one: Callable[[int], Awaitable[str]], offset: int
) -> tuple[float, list[float], list[str]]:
    """Run jobs offset..offset+n-1, `concurrency` at a time; wall seconds, latencies, outcomes."""
    sem = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    outcomes: list[str] = []

    async def job(i: int) -> None:
        async with sem:
            t0 = time.perf_counter()
            try:
                outcomes.append(await one(i))
            except Exception as exc:  # a failed job is counted, not fatal to the run
                outcomes.append(f"error: {type(exc).__name__}: {exc}"[:200])
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(job(offset + i) for i in range(n)))
    return time.perf_counter() - t0, latencies, outcomes


async def measured(
    spec: dict[str, Any],
    one: Callable[[int], Awaitable[str]],
    counter: CommitCounter | None = None,
    shutdown: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Warm-up (untimed), then the timed phase; the figures `end_to_end.py` reads.

    With `spec["pg_db"]` set, `pg_stat_database` is read after an idle pause before
    the timed phase and after `shutdown()` closed every connection after it.
    """
    await drive(spec["warmup"], spec["concurrency"], one, offset=WARMUP_OFFSET)
    pg = (spec["pg_admin"], spec["pg_db"]) if spec.get("pg_db") else None
    if pg:
        await asyncio.sleep(PG_SETTLE_SECONDS)
        xact0 = pg_xact(*pg)
    counts0 = counter.snapshot() if counter else None
    cpu0, runq0 = cpu_seconds(os.getpid()), runq_wait_seconds(os.getpid())
    wall, latencies, outcomes = await drive(spec["jobs"], spec["concurrency"], one, offset=0)
    out: dict[str, Any] = {
        "wall": wall,
        "latencies": latencies,
        "outcomes": outcomes,
        "worker_cpu": cpu_seconds(os.getpid()) - cpu0,
        "worker_runq": runq_wait_seconds(os.getpid()) - runq0,
    }
    if counter and counts0:
        out["commits"] = {k: v - counts0[k] for k, v in counter.snapshot().items()}
    if shutdown:
        shutdown()
    if pg:
        await asyncio.sleep(0.5)
        xact1 = pg_xact(*pg)
        out["xact"] = {"commit": xact1[0] - xact0[0], "rollback": xact1[1] - xact0[1]}
    return out


# --- (a) the ceiling: no durability at all --------------------------------------------


async def ceiling(spec: dict[str, Any]) -> dict[str, Any]:
    """Create, poll, fetch: straight HTTP calls, nothing written anywhere."""
    scale, first = spec["time_scale"], spec["first_delay"]
    body_input = spec["input"]
    run = spec["run"]
    async with provider_client(spec) as client:

        async def one(i: int) -> str:
            key = f"{run}-{i}"
            r = await client.post(
                "/v1/jobs",
                json={"kind": "report", "input": body_input, "client_reference": key},
                headers={"Idempotency-Key": key},
            )
            r.raise_for_status()
            job_id = r.json()["job_id"]
            await asyncio.sleep(first * scale)
            while True:
                r = await client.get(f"/v1/jobs/{job_id}")
                r.raise_for_status()
                status = r.json()
                if status["state"] in TERMINAL:
                    break
                await asyncio.sleep((status.get("poll_after_seconds") or first) * scale)
            r = await client.get(f"/v1/jobs/{job_id}/result")
            r.raise_for_status()
            check_result(r.json())
            return str(status["state"])

        return await measured(spec, one)


# --- (d) DBOS Transact: a durable workflow per job ------------------------------------


async def dbos(spec: dict[str, Any]) -> dict[str, Any]:
    """A DBOS workflow per job: a create step, durable sleeps, status steps, a result step.

    The system database is SQLite or PostgreSQL as the spec says; DBOS creates and
    migrates its schema at launch (before the clock starts). Workflows are started
    with `start_workflow_async` and awaited through their handles, `concurrency` at
    a time, which is what an agent in the same process would do.
    """
    from dbos import DBOS, DBOSConfig, SetWorkflowID  # the `bench` extra; imported only here

    scale, first = spec["time_scale"], spec["first_delay"]
    body_input = spec["input"]
    client = provider_client(spec)

    @DBOS.step()
    async def create_job(key: str) -> str:
        r = await client.post(
            "/v1/jobs",
            json={"kind": "report", "input": body_input, "client_reference": key},
            headers={"Idempotency-Key": key},
        )
        r.raise_for_status()
        return str(r.json()["job_id"])

    @DBOS.step()
    async def job_status(job_id: str) -> dict[str, Any]:
        r = await client.get(f"/v1/jobs/{job_id}")
        r.raise_for_status()
        body: dict[str, Any] = r.json()
        return body

    @DBOS.step()
    async def fetch_result(job_id: str) -> dict[str, Any]:
        r = await client.get(f"/v1/jobs/{job_id}/result")
        r.raise_for_status()
        body: dict[str, Any] = r.json()
        check_result(body)
        return {"sha256": body["sha256"], "items": body.get("items")}

    @DBOS.workflow()
    async def run_job() -> str:
        # The workflow id is the idempotency key: a recovered workflow re-sends the same one.
        job_id = await create_job(str(DBOS.workflow_id))
        await DBOS.sleep_async(first * scale)
        while True:
            status = await job_status(job_id)
            if status["state"] in TERMINAL:
                break
            await DBOS.sleep_async((status.get("poll_after_seconds") or first) * scale)
        await fetch_result(job_id)
        return str(status["state"])

    config: DBOSConfig = {
        "name": "jobgate-bench",
        "system_database_url": spec["dbos_url"],
        "log_level": "WARNING",
    }
    counter = CommitCounter().install()
    DBOS(config=config)
    DBOS.launch()
    run = spec["run"]
    try:

        async def one(i: int) -> str:
            with SetWorkflowID(f"{run}-{i}"):
                handle = await DBOS.start_workflow_async(run_job)
            return await handle.get_result()

        return await measured(spec, one, counter, shutdown=DBOS.destroy)
    finally:
        await client.aclose()
        DBOS.destroy()


def main() -> None:
    kind, spec = sys.argv[1], json.loads(sys.argv[2])
    runner = {"ceiling": ceiling, "dbos": dbos}[kind]
    out = asyncio.run(runner(spec))
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
