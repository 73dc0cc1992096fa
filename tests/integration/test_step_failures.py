"""Build failures and step exceptions are recorded, never silent, and stall at a limit.

Found by fuzzing: an input nested hundreds deep was accepted, then every observer step
raised RecursionError; it was retried every 60 s, never written to history, and
stayed "processing, NOT finished" past its create deadline.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from app.operations import repository as repo
from app.operations.contract.schemas import CreateOperationRequest
from app.operations.services.intake import _new_operation, fingerprint
from app.providers.language.loader import BUILTIN_DIR
from app.providers.language.secrets import REDACTED
from tests.conftest import Gateway

TOKEN = "mock-provider-token-do-not-leak-0123456789"
RETRY = 61.0  # past the 60 s retry after a failed step (time scale 1)


@pytest.fixture
def gateway_settings(tmp_path: Path) -> dict[str, Any]:
    # A profile whose client-reference pointer runs through a string of the input:
    # no create can be built from it, whatever the provider would say.
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    text = (BUILTIN_DIR / "mock.yaml").read_text()
    text = text.replace("name: mock\n", "name: misfit\n", 1)
    text = text.replace("pointer: /client_reference", "pointer: /input/scenario/name/ref", 1)
    (profiles / "misfit.yaml").write_text(text)
    return {"profiles_dir": profiles, "mock_provider_token": TOKEN}


async def _history(gw: Gateway, op_id: str) -> list[dict[str, Any]]:
    return list((await gw.http.get(f"/v1/operations/{op_id}/history")).json()["items"])


async def _step_failures(gw: Gateway, op_id: str) -> int:
    async with gw.ctx.db.transaction() as session:
        op = await repo.get(session, op_id)
    assert op is not None
    return op.step_failures


async def test_a_create_that_cannot_be_built_fails_at_once(gateway: Gateway) -> None:
    r = await gateway.start({"name": "fast"}, provider="misfit")
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["state"] == "failed" and body["done"] is True
    assert body["error"]["code"] == "request_build_failed"
    assert "nothing was sent" in body["error"]["message"]
    failed = [h for h in await _history(gateway, body["operation_id"]) if h["to_state"] == "failed"]
    assert len(failed) == 1 and "nothing was sent" in failed[0]["cause"]
    token = await gateway.token_of(body["operation_id"])
    assert gateway.stats(token)["creates_by_token"] == {}


async def test_an_old_row_too_deep_to_send_fails_recorded(gateway: Gateway) -> None:
    """A row written before intake bounded depth: RecursionError becomes a recorded failure."""
    deep: Any = "leaf"
    for _ in range(600):
        deep = [deep]
    engine = gateway.ctx
    req = CreateOperationRequest(provider="mock", kind="report", input={})
    op = _new_operation(engine, "dev", uuid.uuid4().hex, fingerprint("mock", "x", {}), req)
    op.input = {"deep": deep}  # what today's intake refuses, as an older version stored it
    op.lease_owner, op.lease_expires_at, op.lease_token = None, None, 0
    op.next_poll_at = engine.now()
    async with engine.db.transaction() as session:
        await repo.insert_operation(session, op)
    await gateway.tick()
    body = (await gateway.http.get(f"/v1/operations/{op.id}")).json()
    assert body["state"] == "failed" and body["error"]["code"] == "request_build_failed"
    assert "RecursionError" in body["error"]["message"]
    assert gateway.stats(op.provider_token)["creates_by_token"] == {}
    page = await gateway.http.get(f"/operations/{op.id}")  # the operator page still renders
    assert page.status_code == 200


async def test_step_exceptions_are_counted_recorded_and_stall(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    r = await gateway.start({"name": "never_finishes"})
    op_id = r.json()["operation_id"]
    await gateway.tick(5)  # accepted -> observing

    async def broken_status(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"upstream echoed Bearer {TOKEN} and gave up")

    monkeypatch.setattr(gateway.ctx.client, "status", broken_status)
    limit = gateway.ctx.settings.max_step_failures
    for n in range(1, limit):
        await gateway.tick(RETRY)
        body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
        assert body["state"] == "observing" and not body["done"]
        assert await _step_failures(gateway, op_id) == n
    rows = [h for h in await _history(gateway, op_id) if h["kind"] == "step_failed"]
    assert [h["data"]["consecutive"] for h in rows] == list(range(1, limit))
    assert rows[0]["data"]["exception"] == "RuntimeError"
    assert TOKEN not in str(rows) and REDACTED in rows[0]["data"]["message"]

    await gateway.tick(RETRY)
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["state"] == "stalled" and body["status"] == "needs_attention"
    # Contract v2: a human decides, so the agent is given no call to make, only words.
    assert body["done"] is True and body["next_action"] is None
    assert "NEEDS A HUMAN" in body["message"] and "Tell the user" in body["message"]
    error = body["error"]
    assert error["code"] == "stalled" and error["details"]["failures"] == limit
    assert error["details"]["exception"] == "RuntimeError"
    assert "test_step_failures.py" in error["details"]["where"]
    assert TOKEN not in str(body)
    assert TOKEN not in caplog.text  # nor in the log
    assert await gateway.tick(RETRY) == 0  # automation stopped: nothing is due any more
    inbox = (await gateway.http.get("/v1/attention")).json()["items"]
    assert [i["operation"]["operation_id"] for i in inbox] == [op_id]
    assert "failed repeatedly" in inbox[0]["why"]

    monkeypatch.undo()  # the operator fixed the cause, then resumes it
    r = await gateway.http.post(
        f"/v1/operations/{op_id}/resolve",
        json={
            "decision": "resume_observing",
            "reason": "bug fixed",
            "result_deadline_seconds": 600,
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "observing" and await _step_failures(gateway, op_id) == 0
    await gateway.tick(1)
    assert (await gateway.http.get(f"/v1/operations/{op_id}")).json()["state"] == "observing"


async def test_the_count_is_of_failures_in_a_row(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    op_id = (await gateway.start({"name": "never_finishes"})).json()["operation_id"]
    await gateway.tick(5)
    real_status = gateway.ctx.client.status
    fail = {"left": 2}

    async def flaky_status(*args: Any, **kwargs: Any) -> Any:
        if fail["left"]:
            fail["left"] -= 1
            raise KeyError("state")
        return await real_status(*args, **kwargs)

    monkeypatch.setattr(gateway.ctx.client, "status", flaky_status)
    await gateway.tick(RETRY)
    await gateway.tick(RETRY)
    assert await _step_failures(gateway, op_id) == 2
    await gateway.tick(RETRY)  # a step that applies
    assert await _step_failures(gateway, op_id) == 0
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["state"] == "observing"


async def test_a_failing_step_inside_the_create_request_is_recorded(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken_create(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("cannot encode")

    monkeypatch.setattr(gateway.ctx.client, "create", broken_create)
    # A create deadline far enough away that reconciliation cannot hand it over first.
    far = {"create_seconds": 86400.0, "result_seconds": 172800.0}
    r = await gateway.start({"name": "fast"}, deadlines=far)
    assert r.status_code == 202 and r.json()["status"] == "processing"
    op_id = r.json()["operation_id"]
    rows = [h for h in await _history(gateway, op_id) if h["kind"] == "step_failed"]
    assert len(rows) == 1 and rows[0]["data"]["exception"] == "ValueError"
    for _ in range(gateway.ctx.settings.max_step_failures):
        await gateway.tick(RETRY)
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert body["state"] == "stalled" and body["error"]["details"]["exception"] == "ValueError"
