"""schemathesis against the live gateway in keys mode: every check on, and no 5xx at all.

The gateway runs on a real uvicorn server with its observer and callback loop, on
the database under test (`JOBGATE_DATABASE_URL`, SQLite when unset), against the
real mock provider, with a real API key. Before the run, the database already holds
operations that need a human (a failed result check, a contract violation, a partial
result), so resolve and the attention inbox are reached with real ids. The
schemathesis CLI generates the requests (all phases: examples, coverage, fuzzing,
stateful) and writes every exchange to a HAR file, which this test counts: requests,
check failures, 5xx. One run per seed (`FUZZ_SEEDS`, comma-separated; each its own
database and gateway), so what one seed never draws another may. Run it with
`make fuzz` (CI runs it on SQLite and PostgreSQL).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from app.auth import service as keys
from app.core.db.database import Database
from app.main import create_app
from tests.conftest import make_settings
from tests.support.servers import serve_app
from tests.support.timing import PROCESS_WORK_S, budget

pytestmark = pytest.mark.fuzz

# A run that generated little tested little. Per run (seed); the seeds together make
# about 3,000 requests per database, three times the floor of 1,000 CI started with.
MIN_REQUESTS = 900
MAX_EXAMPLES = int(os.environ.get("FUZZ_MAX_EXAMPLES", "50"))  # per operation and phase
# Fixed, so a CI failure can be replayed (FUZZ_SEEDS=<the seed> make fuzz).
SEEDS = os.environ.get("FUZZ_SEEDS", "8,20261203,99173").split(",")
TIMEOUT_S = 600  # the schemathesis run; CI's whole budget is far larger, but keep it honest
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
ROOT = Path(__file__).resolve().parents[2]
# schemathesis's workers are threads, and CPython before 3.12 can raise a spurious
# "SystemError: AST constructor recursion depth mismatch" when two threads call
# ast.parse at once (python/cpython#106905), which hypothesis does to describe its
# lambdas. CI's 3.11 hit it once in four runs as a "Runtime Error" (GET /v1/attention,
# coverage phase), so on 3.11 the run uses one worker.
WORKERS = "2" if sys.version_info >= (3, 12) else "1"


@dataclass(frozen=True)
class Counts:
    requests: int
    failures: int
    server_errors: int


def failed_cases(junit: Path, limit: int = 5, width: int = 600) -> list[str]:
    """The first failed or errored test cases of the JUnit report: name and message.

    They go into the assertion message, so a CI log that keeps only the failure's
    summary still says which call failed and why.
    """
    lines = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        for problem in [*case.findall("failure"), *case.findall("error")]:
            text = " ".join((problem.get("message") or problem.text or "").split())
            lines.append(f"{case.get('name')}: {text[:width]}")
    return lines[:limit]


def count(har: Path, junit: Path) -> Counts:
    """Requests and 5xx from the HAR file; failed test cases from the JUnit report."""
    entries = json.loads(har.read_text())["log"]["entries"]
    statuses = [e["response"]["status"] for e in entries]
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    failures = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    return Counts(len(statuses), failures, sum(1 for s in statuses if s >= 500))


# Mock scenarios that end needing a human: a failed result check, a contract violation,
# a partial result to acknowledge.
NEEDING_ATTENTION = [
    {"name": "corrupt_result"},
    {"name": "different_job_id", "list_delay": 1},
    {"name": "partial_results", "processed": 10, "failed": 2},
]


def seed_attention(url: str, key: str) -> list[str]:
    """Operations in the attention inbox before the run, made through the API."""
    auth = {"Authorization": f"Bearer {key}"}
    ids = []
    with httpx2.Client(base_url=url, headers=auth, timeout=10) as http:
        for scenario in NEEDING_ATTENTION:
            r = http.post(
                "/v1/operations",
                json={"provider": "mock", "kind": "report", "input": {"scenario": scenario}},
                headers={"Idempotency-Key": f"attention-{uuid.uuid4().hex}"},
            )
            assert r.status_code == 202, r.text
            ids.append(r.json()["operation_id"])
        ends = time.monotonic() + budget(PROCESS_WORK_S)
        while time.monotonic() < ends:
            inbox = http.get("/v1/attention").json()["items"]
            if {i["operation"]["operation_id"] for i in inbox} >= set(ids):
                return ids
            time.sleep(0.1)
    raise AssertionError(f"not all of {ids} need attention: {inbox}")


async def mint_key(database_url: str) -> str:
    from datetime import UTC, datetime

    db = Database(database_url)
    try:
        _, key = await keys.create(db, "fuzzer", "admin", datetime.now(UTC))
    finally:
        await db.dispose()
    return key


@pytest.mark.timeout(TIMEOUT_S + 120)
@pytest.mark.parametrize("seed", SEEDS)
def test_schemathesis_finds_no_server_error(
    seed: str,
    database_url: str,
    mock_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = asyncio.run(mint_key(database_url))
    settings = make_settings(
        database_url,
        mock_url,
        tmp_path,
        auth="keys",
        time_scale=0.01,  # generated operations finish in moments, so SSE streams end
        wait_max_seconds=1.0,  # a generated ?timeout=600 must not hold the run
        mock_webhook_secret="whsec_" + "Zm9vYmFyYmF6cXV4cXV1eGZvb2JhcmJhenF1eHF1dXg=",
        observer_id="fuzz-observer",
    )
    report = tmp_path / "report"
    with serve_app(create_app(settings)) as url:
        attention = seed_attention(url, key)
        args = [
            str(SCHEMATHESIS), "run", f"{url}/openapi.json",
            "--checks", "all",
            "--header", f"Authorization: Bearer {key}",
            "--max-examples", str(MAX_EXAMPLES),
            "--seed", seed,
            "--workers", WORKERS,
            "--request-timeout", "10",
            "--generation-database", "none",
            "--report", "har,junit",
            "--report-har-path", str(report / "har.json"),
            "--report-junit-path", str(report / "junit.xml"),
            "--no-color",
        ]  # fmt: skip
        env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.fuzz.hooks", "PYTHONPATH": str(ROOT)}
        started = time.monotonic()
        run = subprocess.run(
            args, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path, env=env
        )
        took = time.monotonic() - started
    counts = count(report / "har.json", report / "junit.xml")
    backend = "postgresql" if database_url.startswith("postgresql") else "sqlite"
    with capsys.disabled():
        print(
            f"\nschemathesis on {backend}: {counts.requests} requests, "
            f"{counts.failures} failures, {counts.server_errors} 5xx "
            f"(seed {seed}, max examples {MAX_EXAMPLES}, {len(attention)} needing attention, "
            f"{took:.0f} s, exit {run.returncode})"
        )
        if counts.failures or counts.server_errors or run.returncode:
            print(run.stdout[-20000:], run.stderr[-5000:])
    assert counts.requests >= MIN_REQUESTS
    assert counts.server_errors == 0
    assert counts.failures == 0 and run.returncode == 0, failed_cases(report / "junit.xml")
