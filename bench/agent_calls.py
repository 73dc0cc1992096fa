"""What an agent spends on a long job: calls, provider status reads, false successes.

    python bench/agent_calls.py [--scale 0.02] [--provider-seconds 240]
                                [--naive-interval 2] [--scenarios fast,corrupt_result] [--json]
                                [--plan-jobs 0] [--plan-seconds 15]

One job that runs `--provider-seconds` (4 minutes) of provider time at the bundled
mock provider (its `run_ms` option), with every duration multiplied by `--scale`
(`JOBGATE_TIME_SCALE` for the gateway, the naive agent's poll interval, the `/wait`
cap) so four minutes pass in 4.8 s at the default 0.02. Three agents each run the
same job, one after the other, each its own:

- `naive`: no gateway; creates the job at the provider and reads its status every
  `--naive-interval` (scaled) seconds until it is terminal, then fetches the result;
- `client`: one `jobgate_client.Client.start_and_wait` call;
- `mcp`: the official MCP client over streamable HTTP at `/mcp`: `start_operation`,
  then `wait_for_operation` until `done`.

The gateway's `/wait` is capped at 60 scaled seconds (`JOBGATE_WAIT_MAX_SECONDS`), as
an MCP host or HTTP proxy would cap a real call, so the number of waits is what
four real minutes would take.

Columns:
- `agent calls`: HTTP requests the naive agent and the client made, MCP tool calls;
- `provider status`: status reads the provider counted for that job
  (`/_mock/stats`), whoever made them (the naive agent, or jobgate's observer);
- `false success`: answers after which an agent that follows the words would report
  success although the result had not been collected and checked: for jobgate
  bodies, a message saying "You may report success" (or a `succeeded` outcome) on
  an operation that is not in state `succeeded`; for the naive agent, a provider
  status saying `succeeded` (nobody checks the result). Must be 0 through jobgate;
- `report`: what the agent ends with.

`--plan-jobs N` (default 0: off) adds the planning comparison (`bench/planning_agents.py`):
after five jobs of about `--plan-seconds` (15 s, real time) teach the gateway the
estimate, N such jobs are checked by an agent that waits what the body advises (`poll`,
today's) and N by one that also waits out `estimated_seconds_left` (`plan`); calls per
job and seconds per job for each. `--scenarios none --fakes none --plan-jobs 4` runs it
alone in under a minute.

`corrupt_result` is the same job whose result fails its checksum: the naive agent
reports success, jobgate says it needs a human.

`--fakes` (default: all six bundled provider fakes, each `jobgate fake-provider` in its
own process) adds one small job per fake, run by `client` and by `mcp` through the same
gateway, so the table shows the calls one job costs per channel against each provider's
API shape (`--fakes none` skips them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.db.migrate import upgrade
from bench import planning_agents as planning
from jobgate_client import Client, RetryPolicy
from tests.support.bundled_fakes import FAKES
from tests.support.processes import Process, free_port, mock_process, wait_healthy

START_TIMEOUT_S = 30.0
SUCCESS_WORDS = "You may report success"
TERMINAL = {"succeeded", "succeeded_partial", "failed", "cancelled"}
WAIT_CAP_S = 60.0  # a real host or proxy holds one call about this long (scaled here)


@dataclass
class Row:
    agent: str
    scenario: str
    agent_calls: int = 0
    provider_status_calls: int | None = 0  # None: not counted (a fake's job)
    false_success: int = 0
    report: str = ""
    seconds: float = 0.0
    job_id: str | None = None
    bodies: list[dict[str, Any]] = field(default_factory=list, repr=False)


def false_success(body: dict[str, Any]) -> bool:
    """A jobgate body that would make a word-following agent report success although the
    result was not collected and checked."""
    says_success = SUCCESS_WORDS in str(body.get("message", "")) or body.get("outcome") in (
        "succeeded",
        "completed_with_errors",
    )
    return says_success and body.get("state") != "succeeded"


def job_input(scenario: str, run_ms: int) -> dict[str, Any]:
    return {"scenario": {"name": scenario, "run_ms": run_ms}}


@dataclass(frozen=True)
class Job:
    """One create: the profile, its kind and the provider's input."""

    provider: str
    kind: str
    input: dict[str, Any]


def mock_job(scenario: str, run_ms: int) -> Job:
    return Job("mock", "report", job_input(scenario, run_ms))


FAKE_KEY = "fake-provider-key-0123456789"


def fake_job(profile: str) -> Job:
    """A small job each fake finishes in a few status reads (docs/provider-fakes.md)."""
    from jobgate_fakes.providers.replicate_predictions.model import VERSION

    out = f"gs://out/{uuid.uuid4()}/"
    chat = {"model": "gpt-4o-mini", "max_tokens": 100, "messages": []}
    inputs: dict[str, tuple[str, dict[str, Any]]] = {
        "openai_batch": (
            "batch",
            {
                "endpoint": "/v1/chat/completions",
                "requests": [
                    {"custom_id": c, "method": "POST", "url": "/v1/chat/completions", "body": chat}
                    for c in ("a", "b")
                ],
            },
        ),
        "anthropic_message_batches": (
            "batch",
            {
                "requests": [
                    {
                        "custom_id": c,
                        "params": {"model": "claude-x", "max_tokens": 100, "messages": []},
                    }
                    for c in ("a", "b")
                ]
            },
        ),  # fmt: skip
        "replicate_predictions": (
            "prediction",
            {"version": VERSION, "input": {"prompt": "one two three"}},
        ),
        "google_translate": (
            "batch_translate_text",
            {
                "sourceLanguageCode": "en",
                "targetLanguageCodes": ["de"],
                "inputConfigs": [{"gcsSource": {"inputUri": "gs://in/a.txt"}}],
                "outputConfig": {"gcsDestination": {"outputUriPrefix": out}},
            },
        ),
        "google_document_ai": (
            "batch_process",
            {
                "processor": "a1b2c3d4e5f60718",
                "inputDocuments": {
                    "gcsDocuments": {
                        "documents": [
                            {"gcsUri": "gs://in-bucket/a.pdf", "mimeType": "application/pdf"}
                        ]
                    }
                },
                "documentOutputConfig": {"gcsOutputConfig": {"gcsUri": out}},
                "skipHumanReview": True,
            },
        ),  # fmt: skip
        "azure_operation_location": (
            "analyze_text",
            {
                "analysisInput": {
                    "documents": [{"id": "1", "language": "en", "text": "Jobs polled."}]
                },
                "tasks": [
                    {
                        "kind": "KeyPhraseExtraction",
                        "taskName": "kp",
                        "parameters": {"modelVersion": "latest"},
                    }
                ],
            },
        ),  # fmt: skip
        "vertex_veo": (
            "generate_videos",
            {
                "model": "veo-3.0-generate-001",
                "instances": [{"prompt": "a cat"}],
                "parameters": {"durationSeconds": 4},
            },
        ),  # fmt: skip
        "fal_queue": ("run", {"app": "fal-ai/flux", "arguments": {"prompt": "a cat"}}),
    }
    kind, body = inputs[profile]
    return Job(profile, kind, body)


# --- processes -----------------------------------------------------------------------


@contextmanager
def mock_provider(tmp: Path) -> Iterator[str]:
    """A fresh mock provider process with in-memory state."""
    with mock_process(tmp, JOBGATE_MOCK_STATE_PATH=":memory:") as url:
        yield url


@contextmanager
def fakes_up(tmp: Path, profiles: list[str]) -> Iterator[dict[str, str]]:
    """Each profile's fake in its own process; the gateway environment that points the
    profiles at them."""
    procs: list[Process] = []
    env: dict[str, str] = {"GOOGLE_CLOUD_PROJECT": "my-project"}
    try:
        for profile in profiles:
            fake, base_var, key_var = FAKES[profile]
            port = free_port()
            args = ["fake-provider", fake, "--port", str(port)]
            proc = Process(args, {"JOBGATE_FAKE_API_KEY": FAKE_KEY}, tmp / f"{fake}.log")
            procs.append(proc.start())
            url = f"http://127.0.0.1:{port}"
            ends = time.monotonic() + START_TIMEOUT_S
            while True:
                try:
                    httpx2.get(f"{url}/_fake/stats", timeout=1)
                    break
                except httpx2.HTTPError:
                    if time.monotonic() > ends or not proc.alive():
                        raise RuntimeError(f"fake {fake} did not start") from None
                    time.sleep(0.05)
            env[base_var] = url
            env[key_var] = FAKE_KEY
        yield env
    finally:
        for proc in procs:
            proc.kill()


@contextmanager
def gateway(
    tmp: Path, mock_url: str, scale: float, extra: dict[str, str] | None = None
) -> Iterator[str]:
    db_url = f"sqlite:///{tmp / 'agent-calls.db'}"
    upgrade(db_url)
    port = free_port()
    env = {
        "JOBGATE_DATABASE_URL": db_url,
        "JOBGATE_DATA_DIR": str(tmp / "data"),
        "JOBGATE_MOCK_PROVIDER_URL": mock_url,
        "JOBGATE_AUTH": "dev",
        "JOBGATE_TIME_SCALE": str(scale),
        "JOBGATE_WAIT_MAX_SECONDS": str(WAIT_CAP_S * scale),
        "JOBGATE_OBSERVER_INTERVAL_SECONDS": str(min(0.05, scale * 5)),
        **(extra or {}),
    }
    args = ["serve", "--port", str(port), "--log-level", "warning"]
    proc = Process(args, env, tmp / "gateway.log").start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, START_TIMEOUT_S)
        yield url
    finally:
        proc.kill()


def status_calls(mock_url: str, job_id: str | None) -> int:
    if not job_id:
        return 0
    stats = httpx2.get(f"{mock_url}/_mock/stats", timeout=10).json()
    return int(stats["jobs"].get(job_id, {}).get("status_calls", 0))


# --- the three agents ----------------------------------------------------------------


async def naive_agent(
    mock_url: str, scenario: str, run_ms: int, interval: float, budget_s: float
) -> Row:
    """Polls the provider itself; believes its status."""
    row = Row("naive", scenario)
    started = time.monotonic()
    async with httpx2.AsyncClient(base_url=mock_url, timeout=10) as http:
        body = {"kind": "report", "input": job_input(scenario, run_ms)}
        created = await http.post(
            "/v1/jobs", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
        )
        row.agent_calls += 1
        row.job_id = created.json()["job_id"]
        state = created.json().get("state", "queued")
        due = time.monotonic()
        while state not in TERMINAL and time.monotonic() - started < budget_s:
            # Every `interval` from the last slot, as a `sleep(2)` loop means to: the call's
            # own latency (large next to a scaled interval) is not added, and a slot missed
            # while a call was slow is skipped, never made up in a burst.
            due = max(due + interval, time.monotonic())
            await asyncio.sleep(due - time.monotonic())
            status = (await http.get(f"/v1/jobs/{row.job_id}")).json()
            row.agent_calls += 1
            state = status["state"]
            if state == "succeeded":
                row.false_success += 1  # taken on the provider's word; nothing checked it
        if state == "succeeded":
            await http.get(f"/v1/jobs/{row.job_id}/result")
            row.agent_calls += 1
        row.report = {"succeeded": "succeeded"}.get(state, state)
    row.seconds = time.monotonic() - started
    return row


class _Counting(httpx2.HTTPTransport):
    """Counts the client's requests and keeps the operation bodies it received."""

    def __init__(self, row: Row) -> None:
        super().__init__()
        self.row = row

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = super().handle_request(request)
        self.row.agent_calls += 1
        response.read()
        try:
            data = response.json()
        except ValueError:
            return response
        if isinstance(data, dict):
            body = data.get("operation", data)
            if isinstance(body, dict) and "message" in body:
                self.row.bodies.append(body)
        return response


def client_agent(url: str, scenario: str, job: Job, max_wait: float) -> Row:
    """One `start_and_wait`."""
    row = Row("client", scenario)
    started = time.monotonic()
    with Client(url, transport=_Counting(row), retry=RetryPolicy(attempts=4)) as jg:
        outcome = jg.start_and_wait(job.provider, job.kind, job.input, uuid.uuid4().hex, max_wait)
    row.report = outcome.kind
    row.job_id = outcome.operation.get("remote_job_id")
    row.seconds = time.monotonic() - started
    return row


@asynccontextmanager
async def mcp_session(url: str) -> AsyncIterator[Any]:
    import httpx2
    from mcp import Client as McpClient
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=120.0)) as http:
        async with McpClient(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            yield client


async def mcp_agent(url: str, scenario: str, job: Job, budget_s: float) -> Row:
    """`start_operation`, then `wait_for_operation` until `done`."""
    row = Row("mcp", scenario)
    started = time.monotonic()
    async with mcp_session(url) as mcp:
        args = {
            "provider": job.provider,
            "kind": job.kind,
            "input": job.input,
            "idempotency_key": uuid.uuid4().hex,
        }
        result = await mcp.call_tool("start_operation", args)
        row.agent_calls += 1
        body = result.structured_content or {}
        row.bodies.append(body)
        while not body.get("done") and time.monotonic() - started < budget_s:
            wait = {"operation_id": body["operation_id"], "timeout_seconds": 50}
            result = await mcp.call_tool("wait_for_operation", wait)
            row.agent_calls += 1
            body = result.structured_content or {}
            row.bodies.append(body)
    row.report = str(body.get("outcome") or "still_running")
    row.job_id = body.get("remote_job_id")
    row.seconds = time.monotonic() - started
    return row


# --- the run -------------------------------------------------------------------------


async def run_scenario(
    url: str, mock_url: str, scenario: str, args: argparse.Namespace
) -> list[Row]:
    run_ms = int(args.provider_seconds * 1000 * args.scale)
    budget = max(30.0, args.provider_seconds * args.scale * 20)
    # One after the other: on a small machine, agents running at once slow each other's
    # calls, which a time-scaled run magnifies.
    naive = await naive_agent(mock_url, scenario, run_ms, args.naive_interval * args.scale, budget)
    job = mock_job(scenario, run_ms)
    client = await asyncio.to_thread(client_agent, url, scenario, job, budget)
    mcp = await mcp_agent(url, scenario, job, budget)
    rows = [naive, client, mcp]
    for row in (client, mcp):
        row.false_success = sum(false_success(b) for b in row.bodies)
    for row in rows:
        row.provider_status_calls = status_calls(mock_url, row.job_id)
    return rows


async def run_fake(url: str, profile: str, budget: float) -> list[Row]:
    """One small job at a fake, by the client and over MCP (the fake counts the provider
    calls itself: `provider status` stays 0 here)."""
    client = await asyncio.to_thread(client_agent, url, profile, fake_job(profile), budget)
    mcp = await mcp_agent(url, profile, fake_job(profile), budget)
    for row in (client, mcp):
        row.false_success = sum(false_success(b) for b in row.bodies)
        row.provider_status_calls = None  # the mock's counters do not know a fake's jobs
    return [client, mcp]


def run(args: argparse.Namespace) -> dict[str, Any]:
    fakes = [] if args.fakes == "none" else args.fakes.split(",")
    with tempfile.TemporaryDirectory(prefix="agent-calls-") as tmp_name:
        tmp = Path(tmp_name)
        with (
            mock_provider(tmp) as mock_url,
            fakes_up(tmp, fakes) as fake_env,
            gateway(tmp, mock_url, args.scale, fake_env) as url,
        ):
            rows: list[Row] = []
            scenarios = [] if args.scenarios == "none" else args.scenarios.split(",")
            for scenario in scenarios:
                rows += asyncio.run(run_scenario(url, mock_url, scenario, args))
            budget = max(30.0, args.provider_seconds * args.scale * 20)
            for profile in fakes:
                rows += asyncio.run(run_fake(url, profile, budget))
            planned = []
            if args.plan_jobs:
                planned = asyncio.run(planning.compare(url, args.plan_jobs, args.plan_seconds))
    return {
        "provider_seconds": args.provider_seconds,
        "scale": args.scale,
        "naive_interval_seconds": args.naive_interval,
        "rows": [{k: v for k, v in asdict(r).items() if k != "bodies"} for r in rows],
        "plan_seconds": args.plan_seconds,
        "plan_rows": [asdict(r) for r in planned],
    }


def per_channel(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The rows of each agent (channel), in table order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(row["agent"], []).append(row)
    return out


def print_report(result: dict[str, Any]) -> None:
    print(
        f"A job of {result['provider_seconds']:g} s provider time (time scale "
        f"{result['scale']:g}); naive agent polls every {result['naive_interval_seconds']:g} s."
    )
    head = ("scenario", "agent", "agent calls", "provider status", "false success", "report")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in result["rows"]:
        cells = (
            r["scenario"],
            r["agent"],
            r["agent_calls"],
            "-" if r["provider_status_calls"] is None else r["provider_status_calls"],
            r["false_success"],
            r["report"],
        )
        print("| " + " | ".join(str(c) for c in cells) + " |")
    print()
    print("calls per job, by channel (every job in the table):")
    for agent, rows in per_channel(result["rows"]).items():
        calls = [r["agent_calls"] for r in rows]
        false = sum(r["false_success"] for r in rows)
        print(
            f"- {agent}: {sum(calls) / len(calls):.1f} on average over {len(calls)} jobs "
            f"(min {min(calls)}, max {max(calls)}); false successes {false}"
        )


def print_planning(result: dict[str, Any]) -> None:
    rows = result["plan_rows"]
    if not rows:
        return
    print()
    print(
        f"Checking a job of about {result['plan_seconds']:g} s (real time) with GETs, "
        f"{len(rows) // len(planning.AGENTS)} jobs per agent, after 5 taught the estimate:"
    )
    for line in planning.summary(rows):
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=0.02)
    parser.add_argument("--provider-seconds", type=float, default=240.0)
    parser.add_argument("--naive-interval", type=float, default=2.0)
    parser.add_argument("--scenarios", default="fast,corrupt_result")
    parser.add_argument("--fakes", default=",".join(FAKES), help="profiles, or `none`")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--plan-jobs", type=int, default=0, help="0: no planning comparison")
    parser.add_argument("--plan-seconds", type=float, default=15.0)
    args = parser.parse_args()
    os.environ.pop("JOBGATE_DATABASE_URL", None)
    result = run(args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        if result["rows"]:
            print_report(result)
        print_planning(result)


if __name__ == "__main__":
    main()
