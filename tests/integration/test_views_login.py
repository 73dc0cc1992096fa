"""Sign-in for people in keys mode, through HTTP (docs/security.md, "Signing in"):
`/login` takes an operator key once and sets a session cookie (HttpOnly, SameSite=Lax,
Secure over https, expiring); only the token's hash is stored; a logout, the key's
revoke or the expiry ends it; an agent key is refused there and keeps its Bearer use;
the cookie never opens the API; form posts that carry it must come from this origin."""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any

import httpx2
import pytest
from sqlalchemy import text

from app.auth import service as keys
from tests.conftest import Gateway

SAME_ORIGIN = {"Origin": "http://127.0.0.1"}
SESSION_SECONDS = 600.0


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"auth": "keys", "session_seconds": SESSION_SECONDS}


async def mint(gw: Gateway, role: str) -> tuple[str, str]:
    name = f"{role}-{uuid.uuid4().hex[:6]}"
    _, key = await keys.create(gw.ctx.db, name, role, gw.clock.now())
    return name, key


async def sign_in(gw: Gateway, key: str, **headers: str) -> httpx2.Response:
    return await gw.http.post(
        "/login", data={"key": key, "next": "/operations/attention"}, headers=SAME_ORIGIN | headers
    )


COLUMNS = ("id", "token_hash", "key_id", "created_at", "expires_at", "ended_at")


async def session_rows(gw: Gateway) -> list[dict[str, Any]]:
    sql = text(f"SELECT {', '.join(COLUMNS)} FROM sessions ORDER BY id")
    async with gw.ctx.db.read() as txn:
        rows = (await txn.execute(sql)).all()
    return [dict(zip(COLUMNS, row, strict=True)) for row in rows]


async def test_the_login_page_is_a_form_with_one_field(gateway: Gateway) -> None:
    r = await gateway.http.get("/login")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    form = r.text[r.text.index('<form method="post" action="/login"') :]
    form = form[: form.index("</form>")]
    fields = re.findall(r'<input name="([a-z]+)"( type="[a-z]+")?', form)
    assert [n for n, kind in fields if kind != ' type="hidden"'] == ["key"]
    assert 'type="password"' in form and "--role operator" in r.text


async def test_an_operator_signs_in_once_and_the_cookie_stands_for_the_key(
    gateway: Gateway,
) -> None:
    name, key = await mint(gateway, "operator")
    r = await sign_in(gateway, key)
    assert r.status_code == 303 and r.headers["location"] == "/operations/attention"
    cookie = r.headers["set-cookie"]
    token = re.match(r"jobgate_session=(jgs_[A-Za-z0-9_-]{43});", cookie)
    assert token is not None, cookie
    flags = [f.strip().lower() for f in cookie.split(";")[1:]]
    assert "httponly" in flags and "samesite=lax" in flags and "path=/" in flags
    assert f"max-age={int(SESSION_SECONDS)}" in flags and "secure" not in flags  # http here
    rows = await session_rows(gateway)
    assert len(rows) == 1 and rows[0]["ended_at"] is None
    assert rows[0]["token_hash"] == hashlib.sha256(token.group(1).encode()).hexdigest()
    assert token.group(1) not in str(rows) and key not in str(rows)  # only a hash is stored

    page = await gateway.http.get("/operations")  # the client sends the cookie now
    assert page.status_code == 200 and name in page.text
    assert 'action="/logout"' in page.text
    # The cookie is for the pages only: the API still wants a Bearer key.
    api = await gateway.http.get("/v1/operations")
    assert api.status_code == 401


async def test_https_makes_the_cookie_secure(gateway: Gateway) -> None:
    _, key = await mint(gateway, "operator")
    transport = httpx2.ASGITransport(app=gateway.app)
    async with httpx2.AsyncClient(transport=transport, base_url="https://127.0.0.1") as http:
        r = await http.post("/login", data={"key": key}, headers={"Origin": "https://127.0.0.1"})
    assert r.status_code == 303
    assert "secure" in [f.strip().lower() for f in r.headers["set-cookie"].split(";")]


async def test_logout_revoke_and_expiry_each_end_the_session(gateway: Gateway) -> None:
    _, key = await mint(gateway, "operator")
    assert (await sign_in(gateway, key)).status_code == 303
    token = gateway.http.cookies["jobgate_session"]
    r = await gateway.http.post("/logout", headers=SAME_ORIGIN)
    assert r.status_code == 303 and r.headers["location"] == "/login?done=logout"
    assert 'jobgate_session=""' in r.headers["set-cookie"] or "max-age=0" in (
        r.headers["set-cookie"].lower()
    )
    assert "jobgate_session" not in gateway.http.cookies  # the browser dropped it
    gateway.http.cookies.set("jobgate_session", token)  # one kept it anyway: still refused
    ended = await gateway.http.get("/operations")
    assert ended.status_code == 401 and "sign in again" in ended.text
    assert (await session_rows(gateway))[0]["ended_at"] is not None
    gateway.http.cookies.clear()

    name, key = await mint(gateway, "operator")
    await sign_in(gateway, key)
    assert (await gateway.http.get("/operations")).status_code == 200
    await keys.revoke(gateway.ctx.db, name, gateway.clock.now())
    assert (await gateway.http.get("/operations")).status_code == 401

    _, key = await mint(gateway, "operator")
    await sign_in(gateway, key)
    gateway.clock.advance(SESSION_SECONDS - 1)
    assert (await gateway.http.get("/operations")).status_code == 200
    gateway.clock.advance(2)
    assert (await gateway.http.get("/operations")).status_code == 401


async def test_an_agent_key_is_refused_at_login_and_keeps_its_bearer_use(
    gateway: Gateway,
) -> None:
    name, key = await mint(gateway, "agent")
    r = await sign_in(gateway, key)
    assert r.status_code == 403 and "agent key" in r.text and "--role operator" in r.text
    assert "set-cookie" not in r.headers and await session_rows(gateway) == []
    assert key not in r.text
    api = await gateway.http.get("/v1/operations", headers={"Authorization": f"Bearer {key}"})
    assert api.status_code == 200
    for bad in ("", "jgk_" + "x" * 43, "not-a-key"):
        r = await sign_in(gateway, bad)
        assert r.status_code in (401, 422) and "set-cookie" not in r.headers, bad
    assert await session_rows(gateway) == []


async def test_the_401_page_sends_a_person_to_login_with_an_operator_key(
    gateway: Gateway,
) -> None:
    r = await gateway.http.get("/operations/attention")
    assert r.status_code == 401 and "www-authenticate" not in r.headers
    assert 'href="/login?next=%2Foperations%2Fattention"' in r.text
    assert "--role operator" in r.text and "--role agent" not in r.text


async def test_signed_in_form_posts_must_come_from_this_origin(gateway: Gateway) -> None:
    _, key = await mint(gateway, "operator")
    _, agent = await mint(gateway, "agent")
    made = await gateway.http.post(
        "/v1/operations",
        json={"provider": "mock", "kind": "report", "input": {"scenario": {"name": "slow"}}},
        headers={"Authorization": f"Bearer {agent}", "Idempotency-Key": uuid.uuid4().hex},
    )
    op_id = made.json()["operation_id"]
    # A cross-site login (login CSRF) is refused before the key is looked at.
    r = await sign_in(gateway, key, Origin="http://evil.example")
    assert r.status_code == 403 and "set-cookie" not in r.headers
    assert (await sign_in(gateway, key)).status_code == 303
    url = f"/operations/{op_id}/cancel"
    for headers in ({}, {"Origin": "http://127.0.0.1:9999"}, {"Sec-Fetch-Site": "cross-site"}):
        r = await gateway.http.post(url, data={"reason": "x"}, headers=headers)
        assert r.status_code == 403 and "cross_origin_refused" in r.text, headers
    body = (
        await gateway.http.get(
            f"/v1/operations/{op_id}", headers={"Authorization": f"Bearer {agent}"}
        )
    ).json()
    assert body["status"] == "processing"  # nothing was recorded
    r = await gateway.http.post(url, data={"reason": "x"}, headers=SAME_ORIGIN)
    assert r.status_code == 303
