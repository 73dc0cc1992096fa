"""SQL statements and transactions per job, by statement kind, with jobs run one at a time.

The in-process gateway (its real observer loop) on a fresh SQLite database against the
real mock provider, scenario `slow` (3 running polls), time scale 0.005; each job is
created and then waited on until done before the next starts, so nothing is shared
between jobs. Counts every statement the gateway sends (a probe in `app.core.db.txn.PROBES`),
by its first words, and every call its SQLite connections sent to a thread (a BEGIN
IMMEDIATE that found the write lock taken, a commit with its checkpoint).

    .venv/bin/python bench/statements_per_job.py [--jobs 10]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.config import Settings  # noqa: E402
from app.core.db import txn  # noqa: E402
from app.core.db.migrate import upgrade  # noqa: E402
from app.main import create_app  # noqa: E402
from tests.support.processes import mock_process  # noqa: E402

BODY = {"provider": "mock", "kind": "report", "input": {"scenario": {"name": "slow", "polls": 3}}}
WORDS = 3  # a statement's kind: its first words (e.g. "INSERT INTO audit_log")


TRIPS = "calls sent to a thread"


class Counting(txn.Probe):
    """Every statement by its first words."""

    def __init__(self, seen: collections.Counter[str]) -> None:
        self.seen = seen

    def statement(self, _t: Any, sql: str, _args: Any, _seconds: float) -> None:
        self.seen[" ".join(sql.split()[:WORDS])] += 1


async def count(url: str, mock_url: str, data: Path, jobs: int) -> collections.Counter[str]:
    settings = Settings(
        database_url=url, data_dir=data, auth="dev", mock_provider_url=mock_url, time_scale=0.005
    )
    app = create_app(settings)
    seen: collections.Counter[str] = collections.Counter()
    async with app.router.lifespan_context(app):
        probe = Counting(seen)
        txn.PROBES.append(probe)
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            for _ in range(jobs):
                key = {"Idempotency-Key": uuid.uuid4().hex}
                op = (await c.post("/v1/operations", json=BODY, headers=key)).json()
                while not op["done"]:
                    wait = f"/v1/operations/{op['operation_id']}/wait"
                    op = (await c.get(wait, params={"timeout": 5})).json()
        txn.PROBES.remove(probe)
        pool = app.state.ctx.db.pool
        seen[TRIPS] = sum(conn.trips for conn in pool.idle())
    return seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        url = f"sqlite:///{tmp}/jobgate.db"
        upgrade(url)
        with mock_process(tmp) as mock_url:
            seen = asyncio.run(count(url, mock_url, tmp / "data", args.jobs))
    trips = seen.pop(TRIPS, 0) / args.jobs
    per = {k: v / args.jobs for k, v in seen.most_common()}
    begins = sum(v for k, v in per.items() if k.startswith("BEGIN"))
    print(f"{args.jobs} jobs, one at a time: {sum(per.values()):.1f} statements per job")
    print(f"transactions per job: {begins:.1f}")
    print(f"{TRIPS} per job: {trips:.1f}")
    for kind, n in per.items():
        print(f"  {n:6.1f}  {kind}")


if __name__ == "__main__":
    main()
