"""Two agents that check on a job with `GET /v1/operations/{id}` between other work, for
`bench/agent_calls.py --plan-jobs N`: how many calls, and how long, a job costs an agent
that follows only the gateway's poll advice, and one that also uses the estimate.

- `poll` (today's): after each body, waits `next_action.after_seconds` and reads again;
- `plan`: waits `max(after_seconds, estimated_seconds_left)` when the body carries an
  estimate (docs/agent-api.md, "How long"), else as `poll`.

Neither holds a `/wait` (an agent that does other work between checks: a waiting agent
makes about two calls a job either way). The gateway learns the estimate from `warm_up`
jobs of the same kind first (`JOBGATE_ESTIMATE_MIN_JOBS`, 5), each of about the same
provider time, spread by +-20%, as the measured ones are.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx2

AGENTS = ("poll", "plan")
MIN_WAIT_S = 5.0  # what the gateway advises at least (presenter.MIN_POLL_AFTER)


@dataclass
class PlanRow:
    agent: str
    agent_calls: int = 0
    seconds: float = 0.0  # the create to the agent reading `done`
    late_seconds: float = 0.0  # how long after the gateway had the end the agent read it
    report: str = ""
    false_success: int = 0
    had_estimate: bool = False


def _create_body(run_ms: int) -> dict[str, Any]:
    return {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": {"name": "fast", "run_ms": run_ms}},
    }


def run_times(n: int, seconds: float, rng: random.Random) -> list[int]:
    """`n` provider times (ms) around `seconds`, +-20%."""
    return [int(seconds * 1000 * rng.uniform(0.8, 1.2)) for _ in range(n)]


async def _create(http: httpx2.AsyncClient, run_ms: int) -> dict[str, Any]:
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    answer = await http.post("/v1/operations", json=_create_body(run_ms), headers=headers)
    answer.raise_for_status()
    return dict(answer.json())


async def warm_up(url: str, times_ms: list[int]) -> None:
    """Run these jobs to the end at once (each one create and /wait calls)."""

    async def one(run_ms: int) -> None:
        async with httpx2.AsyncClient(base_url=url, timeout=120) as http:
            body = await _create(http, run_ms)
            while not body["done"]:
                waited = await http.get(f"{body['status_url']}/wait", params={"timeout": 60})
                body = waited.json()

    await asyncio.gather(*(one(ms) for ms in times_ms))


async def check_agent(url: str, agent: str, run_ms: int, budget_s: float) -> PlanRow:
    """One job, checked with GETs at the waits the agent chooses."""
    row = PlanRow(agent)
    started = time.monotonic()
    async with httpx2.AsyncClient(base_url=url, timeout=30) as http:
        body = await _create(http, run_ms)
        row.agent_calls += 1
        while not body["done"] and time.monotonic() - started < budget_s:
            action = body.get("next_action") or {}
            wait = float(action.get("after_seconds") or body.get("poll_after_seconds") or 5)
            left = body.get("estimated_seconds_left")
            row.had_estimate = row.had_estimate or body.get("estimate") is not None
            if agent == "plan" and isinstance(left, int | float):
                wait = max(wait, float(left))
            await asyncio.sleep(wait)
            body = (await http.get(body["status_url"])).json()
            row.agent_calls += 1
            says = "You may report success" in str(body.get("message", ""))
            row.false_success += int(says and body.get("state") != "succeeded")
    row.seconds = time.monotonic() - started
    # The done body's `elapsed_seconds` is the create to the end the gateway wrote.
    row.late_seconds = max(0.0, row.seconds - float(body.get("elapsed_seconds") or 0.0))
    row.report = str(body.get("outcome") or "still_running")
    return row


async def compare(url: str, jobs: int, seconds: float, seed: int = 7) -> list[PlanRow]:
    """Warm the estimate up, then `jobs` jobs per agent, all at once."""
    rng = random.Random(seed)
    await warm_up(url, run_times(5, seconds, rng))
    measured = run_times(jobs, seconds, rng)
    budget = seconds * 6 + 30
    runs = [check_agent(url, agent, ms, budget) for agent in AGENTS for ms in measured]
    return list(await asyncio.gather(*runs))


def summary(rows: list[dict[str, Any]]) -> list[str]:
    """One line per agent: calls and seconds per job."""
    lines = []
    for agent in AGENTS:
        mine = [r for r in rows if r["agent"] == agent]
        if not mine:
            continue
        n = len(mine)
        calls = sum(r["agent_calls"] for r in mine) / n
        secs = sum(r["seconds"] for r in mine) / n
        late = sum(r["late_seconds"] for r in mine) / n
        ok = sum(r["report"] == "succeeded" for r in mine)
        false = sum(r["false_success"] for r in mine)
        est = sum(r["had_estimate"] for r in mine)
        lines.append(
            f"- {agent}: {calls:.1f} calls per job, {secs:.1f} s per job (read the end "
            f"{late:.1f} s after the gateway had it), {ok}/{n} succeeded, {est}/{n} with an "
            f"estimate, false successes {false}"
        )
    return lines
