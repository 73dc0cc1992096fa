"""`resolve accept_job` is guarded (docs/agent-api.md, "Resolve: accept_job is checked"):
a job another operation follows, a job the provider does not have, and a job that
cannot be read are refused with nothing written, over REST and through `jobgate ops
--database-url` (the same service). The provider-side checks of a client reference and
an item count are in tests/integration/profiles/test_*_accept_job.py.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from app.cli import build_parser
from app.core.runtime.clock import FakeClock
from tests.conftest import Gateway, make_settings


@pytest.fixture
async def gateway(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> AsyncIterator[Gateway]:
    """The gateway in-process, its fake clock starting at the real time: the CLI runs on
    the system clock, so the two must agree on the deadlines."""
    from app.main import create_app

    clock = FakeClock(datetime.now(UTC))
    app = create_app(
        make_settings(database_url, mock_url, tmp_path), clock=clock, run_observer=False
    )
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield Gateway(http=http, app=app, clock=clock, mock=mock_client)


async def resolve(gw: Gateway, op_id: str, job_id: str) -> httpx2.Response:
    body = {"decision": "accept_job", "reason": "verified in console", "remote_job_id": job_id}
    return await gw.http.post(f"/v1/operations/{op_id}/resolve", json=body)


async def needing_a_human(gw: Gateway) -> dict[str, Any]:
    """An operation in `contract_violation`: the mock broke its token (two jobs)."""
    r = await gw.start({"name": "different_job_id", "list_delay": 1})
    final = await gw.run_until_done(r.json()["operation_id"])
    assert final["state"] == "contract_violation", final
    return dict(final)


async def snapshot(gw: Gateway, op_id: str) -> tuple[dict[str, Any], int]:
    body = (await gw.http.get(f"/v1/operations/{op_id}")).json()
    rows = (await gw.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    return body, len(rows)


def ops(argv: list[str]) -> int:
    args = build_parser().parse_args(["ops", *argv])
    return int(args.func(args))


async def cli_resolve(
    capsys: pytest.CaptureFixture[str], database_url: str, op_id: str, job_id: str
) -> tuple[int, str]:
    argv = ["resolve", op_id, "--database-url", database_url, "--decision", "accept_job"]
    argv += ["--reason", "verified", "--remote-job-id", job_id]
    capsys.readouterr()
    code = await anyio.to_thread.run_sync(ops, argv)
    return code, capsys.readouterr().err


async def test_a_job_bound_to_another_operation_is_refused(
    gateway: Gateway,
    database_url: str,
    mock_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = (await gateway.start({"name": "fast"})).json()["operation_id"]
    taken = (await gateway.run_until_done(other))["remote_job_id"]
    stuck = await needing_a_human(gateway)
    op_id = stuck["operation_id"]
    before = await snapshot(gateway, op_id)

    r = await resolve(gateway, op_id, taken)
    assert r.status_code == 409, r.text
    error = r.json()["error"]
    assert error["code"] == "remote_job_bound"
    assert error["details"] == {"remote_job_id": taken, "bound_to": other}
    assert other in error["message"] and "Nothing was written" in error["message"]
    assert r.json()["operation"]["operation_id"] == op_id  # where it stands
    assert await snapshot(gateway, op_id) == before  # nothing written

    monkeypatch.setenv("JOBGATE_MOCK_PROVIDER_URL", mock_url)
    code, err = await cli_resolve(capsys, database_url, op_id, taken)
    assert code == 2 and err.startswith("jobgate ops: 409 remote_job_bound:"), err
    assert other in err
    assert await snapshot(gateway, op_id) == before

    # The true job (one of the two the provider made) is accepted, and checked first.
    true_job = stuck["error"]["details"]["job_ids"][0]
    r = await resolve(gateway, op_id, true_job)
    assert r.status_code == 200 and r.json()["state"] == "accepted", r.text
    rows = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    read, listed, decision = rows[-3], rows[-2], rows[-1]
    assert read["kind"] == "exchange" and read["data"]["operation"] == "status"
    assert true_job in read["data"]["url"]
    # The mock shows nothing of the operation on the job: its lookup by token proves it.
    assert listed["kind"] == "exchange" and listed["data"]["operation"] == "lookup"
    checked = decision["data"]["data"]["checked"]
    assert checked["remote_state"] is not None
    assert checked["proven_by"] == ["lookup"] and checked["lookup"] == {
        "by": "token",
        "listed": True,
    }


async def test_a_job_the_provider_does_not_have_is_refused(
    gateway: Gateway,
    database_url: str,
    mock_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    op_id = (await needing_a_human(gateway))["operation_id"]
    before = await snapshot(gateway, op_id)
    r = await resolve(gateway, op_id, "job_made_up")
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert (error["code"], error["details"]["check"]) == ("remote_job_mismatch", "not_found")
    assert await snapshot(gateway, op_id) == before

    monkeypatch.setenv("JOBGATE_MOCK_PROVIDER_URL", mock_url)
    code, err = await cli_resolve(capsys, database_url, op_id, "job_made_up")
    assert code == 2 and err.startswith("jobgate ops: 422 remote_job_mismatch:"), err
    assert await snapshot(gateway, op_id) == before


async def test_a_job_that_cannot_be_read_is_not_accepted(
    gateway: Gateway,
    database_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CLI's environment points the profile at a port nobody listens on."""
    stuck = await needing_a_human(gateway)
    op_id, true_job = stuck["operation_id"], stuck["error"]["details"]["job_ids"][0]
    before = await snapshot(gateway, op_id)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        monkeypatch.setenv("JOBGATE_MOCK_PROVIDER_URL", f"http://127.0.0.1:{sock.getsockname()[1]}")
        code, err = await cli_resolve(capsys, database_url, op_id, true_job)
    assert code == 2 and err.startswith("jobgate ops: 409 remote_job_unverified:"), err
    assert "ConnectError" in err and "Nothing was written" in err
    assert await snapshot(gateway, op_id) == before


async def test_the_cli_passes_force_and_a_proven_job_is_not_called_forced(
    gateway: Gateway,
    database_url: str,
    mock_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`jobgate ops resolve --force` sends `force`; a job the lookup proves is accepted as
    proven all the same, and its words say nothing of force."""
    stuck = await needing_a_human(gateway)
    op_id, true_job = stuck["operation_id"], stuck["error"]["details"]["job_ids"][0]
    monkeypatch.setenv("JOBGATE_MOCK_PROVIDER_URL", mock_url)
    argv = ["resolve", op_id, "--database-url", database_url, "--decision", "accept_job"]
    argv += ["--reason", "verified", "--remote-job-id", true_job, "--force"]
    capsys.readouterr()
    code = await anyio.to_thread.run_sync(ops, argv)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "taken by force" not in out
    decision = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"][-1]
    assert decision["data"]["data"]["decision"]["force"] is True
    assert decision["data"]["data"]["checked"]["proven_by"] == ["lookup"]
    assert "forced" not in decision["cause"]
