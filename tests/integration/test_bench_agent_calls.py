"""Smoke run of `bench/agent_calls.py` at a small scale: it still runs, the three agents
report what the job did, every bundled fake's job ends right by the client and over
MCP, and no jobgate answer invites a false success."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKES = (
    "openai_batch",
    "anthropic_message_batches",
    "replicate_predictions",
    "google_translate",
    "google_document_ai",
    "azure_operation_location",
    "vertex_veo",
    "fal_queue",
)


def test_agent_calls_bench_runs_and_counts() -> None:
    cmd = [sys.executable, str(ROOT / "bench" / "agent_calls.py"), "--json"]
    cmd += ["--provider-seconds", "30", "--scale", "0.02", "--scenarios", "fast,corrupt_result"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {(r["scenario"], r["agent"]): r for r in json.loads(proc.stdout)["rows"]}
    mock = {(s, a) for s in ("fast", "corrupt_result") for a in ("naive", "client", "mcp")}
    fakes = {(f, a) for f in FAKES for a in ("client", "mcp")}
    assert set(rows) == mock | fakes
    # One small job per bundled fake, per channel: it ends right, with no false success.
    for key in fakes:
        row = rows[key]
        assert row["report"] == "succeeded" and row["false_success"] == 0, row
        assert 1 <= row["agent_calls"] <= 5, row
    for agent in ("client", "mcp"):
        assert rows[("fast", agent)]["report"] == "succeeded"
        assert rows[("corrupt_result", agent)]["report"] == "needs_attention"
        for scenario in ("fast", "corrupt_result"):
            row = rows[(scenario, agent)]
            assert row["false_success"] == 0
            assert row["provider_status_calls"] >= 1 and row["agent_calls"] >= 2
    # The naive agent believes the provider, even about a corrupt result.
    assert rows[("corrupt_result", "naive")]["report"] == "succeeded"
    assert rows[("corrupt_result", "naive")]["false_success"] == 1
    assert rows[("fast", "naive")]["agent_calls"] > rows[("fast", "client")]["agent_calls"]


def test_planning_comparison_runs_with_an_estimate() -> None:
    """`--plan-jobs`: after five jobs taught the estimate, the agent that waits it out
    makes no more calls than the one that follows only the poll advice, and both end
    right with no false success."""
    cmd = [sys.executable, str(ROOT / "bench" / "agent_calls.py"), "--json"]
    cmd += ["--scenarios", "none", "--fakes", "none", "--plan-jobs", "1", "--plan-seconds", "8"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["rows"] == []
    rows = {r["agent"]: r for r in result["plan_rows"]}
    assert set(rows) == {"poll", "plan"}
    for row in rows.values():
        assert row["report"] == "succeeded" and row["false_success"] == 0, row
        assert row["had_estimate"], row
    assert rows["plan"]["agent_calls"] <= rows["poll"]["agent_calls"]
    # The create, then one read once the estimated time is out; one more when a loaded
    # machine's observer finished the job late (seen: 4.5 s late at load 14).
    assert rows["plan"]["agent_calls"] <= 3, rows["plan"]
