"""`jobgate ops ... --database-url URL`: the operator CLI straight on the database.

Operations are made through the real HTTP API against the real mock provider (an
in-process gateway whose observer runs when a test ticks it); the CLI then reads and
writes the same database with no gateway in between. Its `--json` output must be the
very bodies the REST API returns to an operator, and what it writes (cancel intents,
decisions) must be carried out by the gateway's observer like any other.
"""

from __future__ import annotations

import getpass
import json
import subprocess
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from sqlalchemy import create_engine, text

from app.cli import build_parser
from app.core.db.database import sync_url
from app.core.runtime.clock import FakeClock
from app.ops_cli import local
from tests.conftest import Gateway, make_settings
from tests.support.cli_run import jobgate_cli
from tests.support.timing import PROCESS_WORK_S, budget

CLI_ACTOR = f"cli:{getpass.getuser()}"


@pytest.fixture
async def gw(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> AsyncIterator[Gateway]:
    """The gateway in-process, its fake clock starting at the real time: the CLI runs on
    the system clock, as it would beside a real gateway, so the two clocks must agree."""
    from app.main import create_app

    clock = FakeClock(datetime.now(UTC))
    app = create_app(
        make_settings(database_url, mock_url, tmp_path), clock=clock, run_observer=False
    )
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield Gateway(http=http, app=app, clock=clock, mock=mock_client)


def _ops(argv: list[str]) -> int:
    args = build_parser().parse_args(["ops", *argv])
    return int(args.func(args))


async def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`jobgate ops ARGV` in a worker thread (it runs its own event loop): exit, out, err."""
    capsys.readouterr()
    code = await anyio.to_thread.run_sync(_ops, list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


async def start(gw: Gateway, scenario: dict[str, Any]) -> str:
    r = await gw.start(scenario)
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


async def rest(gw: Gateway, path: str, **params: Any) -> Any:
    r = await gw.http.get(path, params=params)
    assert r.status_code == 200, r.text
    return r.json()


async def test_list_show_attention_and_wait_json_equal_the_rest_bodies(
    gw: Gateway, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ok = await start(gw, {"name": "fast"})
    bad = await start(gw, {"name": "corrupt_result"})
    partial = await start(gw, {"name": "partial_results", "processed": 10, "failed": 2})
    for op_id in (ok, bad, partial):
        await gw.run_until_done(op_id)
    db = ("--database-url", database_url, "--json")

    code, out, err = await cli(capsys, "list", *db)
    assert (code, err) == (0, "")
    listed = json.loads(out)
    assert listed == await rest(gw, "/v1/operations")
    assert {i["operation_id"] for i in listed["items"]} == {ok, bad, partial}

    code, out, _ = await cli(capsys, "list", *db, "--limit", "1")
    first = json.loads(out)
    assert first == await rest(gw, "/v1/operations", limit=1) and first["next_cursor"]
    code, out, _ = await cli(capsys, "list", *db, "--limit", "1", "--cursor", first["next_cursor"])
    assert json.loads(out) == await rest(gw, "/v1/operations", limit=1, cursor=first["next_cursor"])
    code, out, _ = await cli(capsys, "list", *db, "--status", "completed_with_errors")
    assert json.loads(out) == await rest(gw, "/v1/operations", status="completed_with_errors")
    assert [i["operation_id"] for i in json.loads(out)["items"]] == [partial]

    for op_id in (ok, bad):
        code, out, _ = await cli(capsys, "show", op_id, *db)
        assert code == 0
        history = await rest(gw, f"/v1/operations/{op_id}/history")
        assert json.loads(out) == {
            "operation": await rest(gw, f"/v1/operations/{op_id}"),
            "history": history["items"],
        }
        assert len(history["items"]) > 3

    code, out, _ = await cli(capsys, "attention", *db)
    inbox = json.loads(out)
    assert code == 0 and inbox == await rest(gw, "/v1/attention")
    assert [i["operation"]["operation_id"] for i in inbox["items"]] == [bad, partial]

    code, out, _ = await cli(capsys, "wait", ok, *db)
    assert code == 0 and json.loads(out) == await rest(gw, f"/v1/operations/{ok}/wait", timeout=0)
    code, out, _ = await cli(capsys, "wait", bad, *db)
    assert code == 1 and json.loads(out)["status"] == "needs_attention"

    # The tables are the REST mode's tables, filled from the same bodies.
    code, out, _ = await cli(capsys, "show", ok, "--database-url", database_url)
    assert code == 0 and f"operation   {ok}" in out
    assert "result_collecting -> succeeded" in out
    code, out, _ = await cli(capsys, "attention", "--database-url", database_url)
    line = next(x for x in out.splitlines() if x.startswith(bad))
    assert "result_validation_failed" in line and "failed its checks" in line


async def test_cancel_records_the_intent_and_the_observer_cancels(
    gw: Gateway, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    op_id = await start(gw, {"name": "never_finishes"})
    await gw.tick(61)  # observing
    code, out, err = await cli(
        capsys, "cancel", op_id, "--database-url", database_url, "--reason", "no longer needed"
    )
    assert code == 0, err
    assert out.startswith(f"{op_id}: cancelling")

    history = (await rest(gw, f"/v1/operations/{op_id}/history"))["items"]
    intent = next(i for i in history if i["kind"] == "intent")
    assert intent["actor"] == f"operator:{CLI_ACTOR}" and intent["data"]["by"] == CLI_ACTOR
    assert intent["data"]["reason"] == "no longer needed"
    assert (await rest(gw, f"/v1/operations/{op_id}"))["state"] == "observing"  # an intent only

    final = await gw.run_until_done(op_id)
    assert final["status"] == "cancelled"
    (job,) = gw.jobs_for(op_id)
    stats = gw.stats(await gw.token_of(op_id))
    assert stats["jobs"][job]["cancel_calls"] == 1  # sent once, by the lease owner

    code, _, err = await cli(capsys, "cancel", op_id, "--database-url", database_url)
    assert code == 2 and err.startswith("jobgate ops: 409 operation_done:")


async def test_resolve_records_the_decision(
    gw: Gateway, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    op_id = await start(gw, {"name": "corrupt_result"})
    await gw.run_until_done(op_id)
    code, out, err = await cli(
        capsys, "resolve", op_id, "--database-url", database_url,
        "--decision", "abandon", "--reason", "bad data", "--json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert body == await rest(gw, f"/v1/operations/{op_id}")
    assert (body["status"], body["state"]) == ("failed", "abandoned")
    assert CLI_ACTOR in body["error"]["message"]

    history = (await rest(gw, f"/v1/operations/{op_id}/history"))["items"]
    decision = history[-1]
    assert decision["actor"] == f"operator:{CLI_ACTOR}"
    assert (decision["from_state"], decision["to_state"]) == (
        "result_validation_failed",
        "abandoned",
    )
    assert "bad data" in decision["cause"]
    assert (await rest(gw, "/v1/attention"))["items"] == []

    again = await cli(capsys, "resolve", op_id, "--database-url", database_url,
                      "--decision", "abandon", "--reason", "twice")  # fmt: skip
    assert again[0] == 2 and again[2].startswith("jobgate ops: 409 not_needing_attention:")


async def test_wait_rereads_until_the_observer_finishes(
    gw: Gateway, database_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.setattr(local, "REREAD_SECONDS", 0.02)
    op_id = await start(gw, {"name": "never_finishes"})
    code, out, _ = await cli(capsys, "wait", op_id, "--database-url", database_url,
                             "--timeout", "0.1")  # fmt: skip
    assert code == 3 and "IN PROGRESS" in out  # still running: the gateway's own words

    op_id = await start(gw, {"name": "slow", "polls": 3})
    result: dict[str, Any] = {}

    async def waiter() -> None:
        result["exit"] = await cli(capsys, "wait", op_id, "--database-url", database_url,
                                   "--json", "--timeout", str(budget(PROCESS_WORK_S)))  # fmt: skip

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await gw.run_until_done(op_id)
    code, out, _ = result["exit"]
    assert code == 0 and json.loads(out)["status"] == "succeeded"


async def test_wait_rereads_at_a_bounded_interval(
    gw: Gateway, database_url: str, monkeypatch: Any
) -> None:
    monkeypatch.setattr(local, "REREAD_SECONDS", 0.05)
    op_id = await start(gw, {"name": "never_finishes"})

    held = budget(0.3)  # a loaded machine may spend the first 0.3 s opening the database

    def run() -> tuple[int, dict[str, Any]]:
        with local.open_database(database_url) as ops:
            body = ops.wait(op_id, timeout=held)
            return ops.reads, dict(body)

    reads, body = await anyio.to_thread.run_sync(run)
    assert body["outcome"] == "timed_out" and not body["done"]
    # Re-read about every 0.05 s while it holds: neither once nor a spin.
    assert 2 <= reads <= held / 0.05 + 2


async def test_unknown_id_exits_2_with_the_rest_line(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["show", "op_nope"], ["cancel", "op_nope"], ["wait", "op_nope"]):
        code, out, err = await cli(capsys, *command, "--database-url", database_url)
        assert (code, out) == (2, "")
        assert (
            err == "jobgate ops: 404 operation_not_found: No operation 'op_nope' for this caller.\n"
        )


def _jobgate_ops(*args: str) -> subprocess.CompletedProcess[str]:
    return jobgate_cli("ops", *args, timeout=budget(PROCESS_WORK_S) * 3)


def test_an_unmigrated_database_is_refused_in_one_line(database_url: str, tmp_path: Path) -> None:
    engine = create_engine(sync_url(database_url))
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM alembic_version"))
    engine.dispose()
    r = _jobgate_ops("list", "--database-url", database_url)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("jobgate ops: the database is not ready:")
    assert "no migration record" in r.stderr and "jobgate migrate" in r.stderr

    missing = tmp_path / "never.db"
    r = _jobgate_ops("attention", "--database-url", f"sqlite:///{missing}")
    assert r.returncode == 2 and "was never migrated" in r.stderr and r.stderr.count("\n") == 1
    assert not missing.exists()  # refusing created nothing


async def test_database_and_gateway_options_do_not_mix(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = await cli(capsys, "list", "--database-url", database_url, "--key", "k")
    assert code == 2 and err.count("\n") == 1 and "--database-url" in err
    code, _, err = await cli(capsys, "list", "--database-url", database_url, "--url", "http://x")
    assert code == 2 and err.count("\n") == 1 and "--database-url" in err
