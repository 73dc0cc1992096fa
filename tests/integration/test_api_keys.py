"""API keys and roles, through HTTP with `JOBGATE_AUTH=keys`, and the `jobgate keys` command.

Agents see only their own operations (another's id answers 404); operators and
admins see every operation and may resolve; keys are stored only as hashes.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import create_engine, text

from app.auth import service as keys
from app.core.db.database import sync_url
from app.core.runtime.clock import FakeClock
from app.operations import repository as repo
from jobgate_fakes.mock.webhooks import signed_headers, webhook_body
from tests.conftest import Gateway, make_settings
from tests.support.cli_run import jobgate_cli

WEBHOOK_SECRET = "whsec_" + base64.b64encode(b"jobgate-test-webhook-secret-0001").decode()


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"auth": "keys", "mock_webhook_secret": WEBHOOK_SECRET}


async def mint(gw: Gateway, name: str, role: str) -> str:
    _, key = await keys.create(gw.ctx.db, name, role, gw.clock.now())
    return key


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def basic(key: str, user: str = "operator") -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{key}".encode()).decode()}


async def create(
    gw: Gateway,
    key: str | None,
    scenario: dict[str, Any] | None = None,
    *,
    idem: str | None = None,
) -> httpx2.Response:
    headers = {"Idempotency-Key": idem or uuid.uuid4().hex}
    if key is not None:
        headers.update(bearer(key))
    body = {
        "provider": "mock",
        "kind": "report",
        "input": {"scenario": scenario or {"name": "fast"}},
    }
    return await gw.http.post("/v1/operations", json=body, headers=headers)


async def created(gw: Gateway, key: str, scenario: dict[str, Any] | None = None) -> str:
    r = await create(gw, key, scenario)
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


def listed(r: httpx2.Response) -> set[str]:
    assert r.status_code == 200, r.text
    return {o["operation_id"] for o in r.json()["items"]}


def code(r: httpx2.Response) -> str:
    return str(r.json()["error"]["code"])


def jobgate(*args: str, database_url: str) -> subprocess.CompletedProcess[str]:
    return jobgate_cli(*args, JOBGATE_DATABASE_URL=database_url)


def key_rows(database_url: str) -> list[dict[str, Any]]:
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT * FROM api_keys ORDER BY id")).mappings().all()
            return [dict(r) for r in rows]
    finally:
        engine.dispose()


async def operation_count(gw: Gateway) -> int:
    async with gw.ctx.db.transaction() as session:
        ops = await repo.list_operations(
            session, repo.ListFilter(), limit=1000, before=None, done_states=frozenset()
        )
    return len(ops)


# --- authentication ----------------------------------------------------------------------


async def test_no_key_is_401_and_writes_nothing(gateway: Gateway) -> None:
    agent = await mint(gateway, "agent-a", "agent")
    op_id = await created(gateway, agent)
    for method, url in (
        ("GET", "/v1/operations"),
        ("GET", f"/v1/operations/{op_id}"),
        ("GET", f"/v1/operations/{op_id}/history"),
        ("GET", f"/v1/operations/{op_id}/wait?timeout=0"),
        ("GET", f"/v1/operations/{op_id}/result"),
        ("GET", f"/v1/operations/{op_id}/errors"),
        ("GET", f"/v1/operations/{op_id}/events"),
        ("POST", f"/v1/operations/{op_id}/cancel"),
        ("GET", "/v1/attention"),
    ):
        r = await gateway.http.request(method, url)
        assert r.status_code == 401, (url, r.text)
        assert code(r) == "unauthorized" and "API key" in r.json()["error"]["message"]
    r = await create(gateway, None)
    assert r.status_code == 401 and code(r) == "unauthorized"
    assert await operation_count(gateway) == 1  # only the authenticated create

    assert (await gateway.http.get("/v1/healthz")).status_code == 200  # stays open


async def test_unknown_malformed_and_revoked_keys_are_401(gateway: Gateway) -> None:
    agent = await mint(gateway, "agent-a", "agent")
    assert (await gateway.http.get("/v1/operations", headers=bearer(agent))).status_code == 200
    for header in (
        bearer("jgk_" + "x" * 43),  # well-formed, unknown
        bearer(agent[:-1]),  # one character short
        bearer("not-a-key"),
        bearer(""),
        {"Authorization": agent},  # no scheme
        basic(agent),  # Basic is for the operator pages, not the API
    ):
        r = await gateway.http.get("/v1/operations", headers=header)
        assert r.status_code == 401 and code(r) == "unauthorized", header

    await keys.revoke(gateway.ctx.db, "agent-a", gateway.clock.now())
    r = await gateway.http.get("/v1/operations", headers=bearer(agent))
    assert r.status_code == 401 and code(r) == "unauthorized"  # at once: no cache kept it
    assert "revoked" in r.json()["error"]["message"]
    r = await create(gateway, agent)
    assert r.status_code == 401


async def test_the_key_is_checked_before_the_body_is_read(gateway: Gateway) -> None:
    """An invalid body without a valid key is 401, not 422 or 400: the body was never
    parsed (app/auth/key_first.py); with a valid key the same body is judged (422/400)."""
    agent = await mint(gateway, "agent-a", "agent")
    nested = b'{"provider": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    bodies = [
        b'{"provider": 5, "kind": []}',  # well-formed, does not match the schema
        b'{"provider": "mock", "input": {"n": 9007199254740993}}',  # outside I-JSON
        b"{not json",
        nested,  # deeper than any parser is allowed to go
    ]
    for header in ({}, bearer("jgk_" + "x" * 43), bearer("not-a-key")):
        for body in bodies:
            r = await gateway.http.post(
                "/v1/operations",
                content=body,
                headers={
                    **header,
                    "Content-Type": "application/json",
                    "Idempotency-Key": uuid.uuid4().hex,
                },
            )
            assert r.status_code == 401, (header, body[:20], r.text)
            assert code(r) == "unauthorized"
            assert r.headers["connection"] == "close"  # the rest of the body is never read
    for body, status in zip(bodies, (422, 422, 400, 400), strict=True):
        r = await gateway.http.post(
            "/v1/operations",
            content=body,
            headers={
                **bearer(agent),
                "Content-Type": "application/json",
                "Idempotency-Key": uuid.uuid4().hex,
            },
        )
        assert r.status_code == status, (body[:20], r.text)
    assert await operation_count(gateway) == 0


async def test_webhooks_need_no_key(gateway: Gateway) -> None:
    """Provider webhooks are signature-verified instead: no API key applies."""
    body = webhook_body("job-that-does-not-exist", "running", (1, 2))
    headers = signed_headers(WEBHOOK_SECRET, uuid.uuid4().hex, body, gateway.clock.now())
    r = await gateway.http.post("/v1/webhooks/mock", content=body.encode(), headers=headers)
    assert r.status_code == 202 and r.json()["status"] == "ignored"


# --- roles -------------------------------------------------------------------------------


async def test_agents_see_and_act_only_on_their_own_operations(gateway: Gateway) -> None:
    a = await mint(gateway, "agent-a", "agent")
    b = await mint(gateway, "agent-b", "agent")
    op_a = await created(gateway, a, {"name": "never_finishes"})
    op_b = await created(gateway, b)

    assert listed(await gateway.http.get("/v1/operations", headers=bearer(a))) == {op_a}
    assert listed(await gateway.http.get("/v1/operations", headers=bearer(b))) == {op_b}
    for method, path in (
        ("GET", ""),
        ("GET", "/history"),
        ("GET", "/wait?timeout=0"),
        ("GET", "/result"),
        ("GET", "/errors"),
        ("GET", "/events"),
        ("POST", "/cancel"),
    ):
        r = await gateway.http.request(method, f"/v1/operations/{op_a}{path}", headers=bearer(b))
        assert r.status_code == 404 and code(r) == "operation_not_found", (path, r.text)
    async with gateway.ctx.db.transaction() as session:
        op = await repo.get(session, op_a)
    assert op is not None and op.cancel_requested_at is None  # B's cancel changed nothing

    r = await gateway.http.post(f"/v1/operations/{op_a}/cancel", headers=bearer(a), json={})
    assert r.status_code == 202  # its own: allowed


async def test_the_same_idempotency_key_from_two_agents_makes_two_operations(
    gateway: Gateway,
) -> None:
    a = await mint(gateway, "agent-a", "agent")
    b = await mint(gateway, "agent-b", "agent")
    ra = await create(gateway, a, idem="shared-key-1")
    rb = await create(gateway, b, idem="shared-key-1")
    assert ra.status_code == 202 and rb.status_code == 202, (ra.text, rb.text)
    assert "Idempotent-Replayed" not in rb.headers
    op_a, op_b = ra.json()["operation_id"], rb.json()["operation_id"]
    assert op_a != op_b
    assert await gateway.token_of(op_a) != await gateway.token_of(op_b)
    # Each agent's replay still finds its own operation.
    again = await create(gateway, b, idem="shared-key-1")
    assert again.status_code == 200 and again.json()["operation_id"] == op_b
    async with gateway.ctx.db.transaction() as session:
        principals = {
            o.id: o.principal
            for o in [await repo.get(session, op_a), await repo.get(session, op_b)]
            if o is not None
        }
    assert principals == {op_a: "agent-a", op_b: "agent-b"}


async def test_operators_see_everything_and_resolve_agents_get_403(gateway: Gateway) -> None:
    a = await mint(gateway, "agent-a", "agent")
    b = await mint(gateway, "agent-b", "agent")
    operator = await mint(gateway, "ops-1", "operator")
    admin = await mint(gateway, "root", "admin")
    gateway.http.headers.update(bearer(operator))  # what run_until_done and tick read with
    op_a = await created(gateway, a, {"name": "different_job_id", "list_delay": 1})
    op_b = await created(gateway, b, {"name": "never_finishes"})
    final = await gateway.run_until_done(op_a)
    assert final["state"] == "contract_violation"

    for key in (operator, admin):
        assert {op_a, op_b} <= listed(await gateway.http.get("/v1/operations", headers=bearer(key)))
        for op_id in (op_a, op_b):
            for path in ("", "/history", "/wait?timeout=0", "/errors"):
                r = await gateway.http.get(f"/v1/operations/{op_id}{path}", headers=bearer(key))
                assert r.status_code == 200, (path, r.text)
        inbox = (await gateway.http.get("/v1/attention", headers=bearer(key))).json()["items"]
        assert [i["operation"]["operation_id"] for i in inbox] == [op_a]
    assert (await gateway.http.get("/v1/attention", headers=bearer(b))).json()["items"] == []
    inbox_a = (await gateway.http.get("/v1/attention", headers=bearer(a))).json()["items"]
    assert [i["operation"]["operation_id"] for i in inbox_a] == [op_a]

    decision = {"decision": "abandon", "reason": "checked with the provider"}
    for key in (a, b):  # the owner too: deciding is an operator's job
        r = await gateway.http.post(
            f"/v1/operations/{op_a}/resolve", json=decision, headers=bearer(key)
        )
        assert r.status_code == 403 and code(r) == "forbidden", r.text
    r = await gateway.http.post(f"/v1/operations/{op_a}/resolve", json={}, headers=bearer(a))
    assert r.status_code == 403  # refused before the body is even looked at
    r = await gateway.http.post(
        f"/v1/operations/{op_a}/resolve", json=decision, headers=bearer(operator)
    )
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "abandoned" and "ops-1" in r.json()["error"]["message"]
    hist = (await gateway.http.get(f"/v1/operations/{op_a}/history", headers=bearer(a))).json()
    assert any(i["actor"] == "operator:ops-1" for i in hist["items"])

    r = await gateway.http.post(
        f"/v1/operations/{op_b}/cancel", json={"reason": "runaway"}, headers=bearer(admin)
    )
    assert r.status_code == 202, r.text
    async with gateway.ctx.db.transaction() as session:
        op = await repo.get(session, op_b)
    assert op is not None and op.cancel_requested_by == "root" and op.principal == "agent-b"


async def test_operator_pages_need_an_operator_key(gateway: Gateway) -> None:
    a = await mint(gateway, "agent-a", "agent")
    b = await mint(gateway, "agent-b", "agent")
    operator = await mint(gateway, "ops-1", "operator")
    op_a, op_b = await created(gateway, a), await created(gateway, b)

    r = await gateway.http.get("/operations")
    assert r.status_code == 401 and "www-authenticate" not in r.headers  # a person signs in
    assert r.headers["content-type"].startswith("text/html") and "/login" in r.text
    r = await gateway.http.get("/operations", headers=basic("jgk_" + "y" * 43))
    assert r.status_code == 401 and "API key" in r.text
    for url in ("/operations", "/operations/attention", f"/operations/{op_a}"):
        r = await gateway.http.get(url, headers=bearer(a))
        assert r.status_code == 403 and "forbidden" in r.text, url
    r = await gateway.http.post(f"/operations/{op_a}/cancel", data={}, headers=bearer(a))
    assert r.status_code == 403

    for header in (basic(operator), basic(operator, user=""), bearer(operator)):
        r = await gateway.http.get("/operations", headers=header)
        assert r.status_code == 200 and op_a in r.text and op_b in r.text
        assert "ops-1" in r.text
    r = await gateway.http.get(f"/operations/{op_b}", headers=basic(operator))
    assert r.status_code == 200 and op_b in r.text


# --- keys at rest and the command --------------------------------------------------------


async def test_keys_are_stored_only_as_hashes(gateway: Gateway, database_url: str) -> None:
    key = await mint(gateway, "agent-a", "agent")
    assert key.startswith("jgk_") and len(key) == 4 + 43
    rows = key_rows(database_url)
    assert len(rows) == 1
    row = rows[0]
    assert row["key_hash"] == hashlib.sha256(key.encode()).hexdigest()
    assert row["key_prefix"] == key[4:12]
    assert row["role"] == "agent" and row["revoked_at"] is None
    secret_part = key[4:]
    assert not any(secret_part in str(v) for v in row.values())
    listing = jobgate("keys", "list", database_url=database_url)
    assert listing.returncode == 0, listing.stderr
    assert "agent-a" in listing.stdout and key[4:12] in listing.stdout
    assert secret_part not in listing.stdout + listing.stderr


async def test_cli_create_list_revoke(gateway: Gateway, database_url: str) -> None:
    r = jobgate(
        "keys", "create", "--name", "cli-agent", "--role", "agent", database_url=database_url
    )
    assert r.returncode == 0, r.stderr
    key = r.stdout.strip()  # the key alone on stdout, printed this once
    assert key.startswith("jgk_") and len(key) == 47 and "only time" in r.stderr
    op_id = await created(gateway, key)
    got = await gateway.http.get(f"/v1/operations/{op_id}", headers=bearer(key))
    assert got.status_code == 200

    dup = jobgate(
        "keys", "create", "--name", "cli-agent", "--role", "admin", database_url=database_url
    )
    assert dup.returncode == 2 and "already exists" in dup.stderr and "jgk_" not in dup.stdout
    bad = jobgate("keys", "create", "--name", "x", "--role", "superuser", database_url=database_url)
    assert bad.returncode == 2 and "superuser" in bad.stderr
    assert [r["name"] for r in key_rows(database_url)] == ["cli-agent"]

    listing = jobgate("keys", "list", database_url=database_url)
    assert listing.returncode == 0
    line = next(x for x in listing.stdout.splitlines() if x.startswith("cli-agent"))
    assert "agent" in line and key[4:12] in line and line.rstrip().endswith("-")
    assert key[4:] not in listing.stdout

    revoked = jobgate("keys", "revoke", "--name", "cli-agent", database_url=database_url)
    assert revoked.returncode == 0, revoked.stderr
    assert key[4:] not in revoked.stdout + revoked.stderr
    r2 = await gateway.http.get(f"/v1/operations/{op_id}", headers=bearer(key))
    assert r2.status_code == 401 and code(r2) == "unauthorized"
    listing = jobgate("keys", "list", database_url=database_url)
    line = next(x for x in listing.stdout.splitlines() if x.startswith("cli-agent"))
    assert not line.rstrip().endswith("-")  # a revoked-at time is shown

    missing = jobgate("keys", "revoke", "--name", "nobody", database_url=database_url)
    assert missing.returncode == 2 and "nobody" in missing.stderr


# --- dev mode ----------------------------------------------------------------------------


@asynccontextmanager
async def dev_gateway(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> AsyncIterator[Gateway]:
    from app.main import create_app

    clock = FakeClock()
    app = create_app(
        make_settings(database_url, mock_url, tmp_path, auth="dev"), clock=clock, run_observer=False
    )
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield Gateway(http=http, app=app, clock=clock, mock=mock_client)


async def test_dev_mode_needs_no_key(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    async with dev_gateway(database_url, mock_url, mock_client, tmp_path) as gw:
        r = await gw.start({"name": "fast"})
        assert r.status_code == 202, r.text
        op_id = r.json()["operation_id"]
        assert (await gw.run_until_done(op_id))["status"] == "succeeded"
        # Any Authorization header is ignored in dev mode, even a bogus one.
        r = await gw.http.get(f"/v1/operations/{op_id}", headers=bearer("nonsense"))
        assert r.status_code == 200
        assert op_id in listed(await gw.http.get("/v1/operations"))
        assert (await gw.http.get("/v1/attention")).status_code == 200
        page = await gw.http.get("/operations")
        assert page.status_code == 200 and op_id in page.text and "dev" in page.text
        async with gw.ctx.db.transaction() as session:
            op = await repo.get(session, op_id)
        assert op is not None and op.principal == "dev"
