"""The operator HTML view, through HTTP: list, attention inbox, detail page, actions."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.core.runtime.clock import FakeClock
from tests.conftest import Gateway, make_settings

SAME_ORIGIN = {"Origin": "http://127.0.0.1"}
SECRET = "mock-bearer-8f3c1d2e9a7b"  # a provider credential: must never reach a page


async def _op(gw: Gateway, scenario: dict[str, Any] | None = None, **extra: Any) -> str:
    r = await gw.start(scenario, **extra)
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


async def _html(gw: Gateway, url: str, status: int = 200) -> str:
    r = await gw.http.get(url)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("text/html")
    return r.text


async def _api(gw: Gateway, op_id: str) -> dict[str, Any]:
    return dict((await gw.http.get(f"/v1/operations/{op_id}")).json())


def _in_order(text: str, needles: list[str]) -> bool:
    positions = [text.find(n) for n in needles]
    return -1 not in positions and positions == sorted(positions)


async def test_list_shows_operations_newest_first_and_filters(gateway: Gateway) -> None:
    done = await _op(gateway, {"name": "fast"}, labels={"team": "alpha"})
    gateway.clock.advance(1)  # distinct created_at, so "newest first" is well defined
    slow = await _op(gateway, {"name": "never_finishes"}, labels={"team": "beta"})
    await gateway.run_until_done(done)
    page = await _html(gateway, "/operations")
    assert _in_order(page, [slow, done])  # newest first
    assert "team=alpha" in page and "team=beta" in page

    by_label = await _html(gateway, "/operations?label=team%3Dalpha")
    assert done in by_label and slow not in by_label
    by_status = await _html(gateway, "/operations?status=processing")
    assert slow in by_status and done not in by_status
    by_state = await _html(gateway, "/operations?state=succeeded&status=&provider=")
    assert done in by_state and slow not in by_state
    trace = (await _api(gateway, slow))["trace_id"]
    by_trace = await _html(gateway, f"/operations?trace_id={trace}")
    assert slow in by_trace and done not in by_trace
    assert done not in await _html(gateway, "/operations?provider=nope")

    bad = await _html(gateway, "/operations?state=bogus", status=422)
    assert "unknown_state" in bad
    assert "invalid_cursor" in await _html(gateway, "/operations?cursor=%21%21", status=400)


async def test_list_pages_with_the_api_cursor(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.views import routes

    monkeypatch.setattr(routes, "PAGE_SIZE", 2)
    ids = []
    for _ in range(3):
        ids.append(await _op(gateway, {"name": "never_finishes"}))
        gateway.clock.advance(1)
    first = await _html(gateway, "/operations")
    assert ids[2] in first and ids[1] in first and ids[0] not in first
    match = re.search(r'href="(/operations\?[^"]*cursor=[^"]+)"', first)
    assert match is not None
    second = await _html(gateway, match.group(1).replace("&amp;", "&"))
    assert ids[0] in second and ids[1] not in second
    assert "older »" not in second and "« newest" in second


async def test_detail_page_shows_timeline_deadlines_lease_and_trace(gateway: Gateway) -> None:
    op_id = await _op(gateway, {"name": "slow", "polls": 3})
    await gateway.tick(5)
    body = await _api(gateway, op_id)
    page = await _html(gateway, f"/operations/{op_id}")
    for needle in (body["trace_id"], body["remote_job_id"], "Deadlines", "Create", "Result"):
        assert needle in page
    assert "test-observer" in page  # the lease owner
    assert "Next poll" in page and "Request cancel" in page

    final = await gateway.run_until_done(op_id)
    assert final["state"] == "succeeded"
    history = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    page = await _html(gateway, f"/operations/{op_id}")
    arrows = [
        f"{h['from_state'] or '∅'} → <b>{h['to_state']}</b>"
        for h in history
        if h["kind"] == "transition"
    ]
    assert len(arrows) >= 3 and _in_order(page, arrows)
    assert page.count('<tr class="k-') == len(history)  # every history row
    assert '<details class="exchange">' in page and "Request headers" in page
    assert "Response headers" in page and "not available, the operation is done" in page


async def test_cancel_form_records_the_intent_and_redirects(gateway: Gateway) -> None:
    op_id = await _op(gateway, {"name": "never_finishes"})
    r = await gateway.http.post(
        f"/operations/{op_id}/cancel", data={"reason": "wrong input"}, headers=SAME_ORIGIN
    )
    assert r.status_code == 303
    assert r.headers["location"] == f"/operations/{op_id}?done=cancel"
    api = await _api(gateway, op_id)
    assert api["status"] == "cancelling" and api["done"] is False
    page = await _html(gateway, r.headers["location"])
    assert "Cancel recorded" in page and "wrong input" in page
    assert "Request cancel" not in page  # the form is gone once requested


async def test_cancel_of_a_done_operation_is_shown_on_the_page(gateway: Gateway) -> None:
    op_id = await _op(gateway, {"name": "fast"})
    await gateway.run_until_done(op_id)
    r = await gateway.http.post(f"/operations/{op_id}/cancel", data={"reason": "late"})
    assert r.status_code == 409 and r.headers["content-type"].startswith("text/html")
    assert "operation_done" in r.text and op_id in r.text


async def test_attention_and_resolve_abandon(gateway: Gateway) -> None:
    op_id = await _op(gateway, {"name": "create_timeout"}, deadlines={"create_seconds": 60})
    final = await gateway.run_until_done(op_id, step=10)
    assert final["state"] == "create_unconfirmed"
    inbox = await _html(gateway, "/operations/attention")
    assert op_id in inbox and "create never confirmed" in inbox

    page = await _html(gateway, f"/operations/{op_id}")
    assert "Record decision" in page and 'value="abandon"' in page
    r = await gateway.http.post(
        f"/operations/{op_id}/resolve",
        data={"decision": "resume_observing", "reason": "try", "remote_job_id": ""},
        headers=SAME_ORIGIN,
    )
    assert r.status_code == 409 and r.headers["content-type"].startswith("text/html")
    assert "remote_job_unknown" in r.text and "Record decision" in r.text
    r = await gateway.http.post(f"/operations/{op_id}/resolve", data={"decision": "nonsense"})
    assert r.status_code == 422 and "The decision was not recorded" in r.text

    r = await gateway.http.post(
        f"/operations/{op_id}/resolve",
        data={"decision": "abandon", "reason": "no job at provider", "result_deadline_seconds": ""},
        headers=SAME_ORIGIN,
    )
    assert r.status_code == 303 and r.headers["location"].endswith("?done=resolve")
    api = await _api(gateway, op_id)
    assert api["state"] == "abandoned" and "no job at provider" in api["error"]["message"]
    assert op_id not in await _html(gateway, "/operations/attention")
    page = await _html(gateway, f"/operations/{op_id}")
    assert "create_unconfirmed → <b>abandoned</b>" in page and "operator:dev" in page


async def test_values_are_html_escaped(gateway: Gateway) -> None:
    evil = "<script>alert(1)</script>"
    op_id = await _op(gateway, {"name": "fast"}, labels={"note": evil})
    for url in ("/operations", f"/operations/{op_id}"):
        page = await _html(gateway, url)
        assert evil not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    page = await _html(gateway, "/operations?provider=%3Cb%3Ex%3C%2Fb%3E")
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page


async def test_unknown_operation_is_a_404_page(gateway: Gateway) -> None:
    page = await _html(gateway, "/operations/op_doesnotexist", status=404)
    assert "operation_not_found" in page and "<html" in page
    r = await gateway.http.post("/operations/op_doesnotexist/cancel", data={"reason": "x"})
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Referer": "http://evil.example/page"},
        {"Origin": "http://127.0.0.1:8080"},
        {"Sec-Fetch-Site": "cross-site", "Origin": "http://127.0.0.1"},
    ],
)
async def test_cross_origin_posts_are_refused(gateway: Gateway, headers: dict[str, str]) -> None:
    op_id = await _op(gateway, {"name": "never_finishes"})
    r = await gateway.http.post(
        f"/operations/{op_id}/cancel", data={"reason": "x"}, headers=headers
    )
    assert r.status_code == 403 and "cross_origin_refused" in r.text
    assert (await _api(gateway, op_id))["status"] == "processing"
    r = await gateway.http.post(
        f"/operations/{op_id}/resolve", data={"decision": "abandon", "reason": "x"}, headers=headers
    )
    assert r.status_code == 403


async def test_actions_are_post_only_and_pages_forbid_framing(gateway: Gateway) -> None:
    op_id = await _op(gateway, {"name": "never_finishes"})
    assert (await gateway.http.get(f"/operations/{op_id}/cancel")).status_code in (404, 405)
    r = await gateway.http.get(f"/operations/{op_id}")
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert r.headers["x-frame-options"] == "DENY"
    css = await gateway.http.get("/operations/static/style.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    paths = gateway.app.openapi()["paths"]
    assert not [p for p in paths if p.startswith("/operations")]


@asynccontextmanager
async def _gateway_with(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path, **kw: Any
) -> AsyncIterator[Gateway]:
    from app.main import create_app

    clock = FakeClock()
    settings = make_settings(database_url, mock_url, tmp_path, **kw)
    app = create_app(settings, clock=clock, run_observer=False)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield Gateway(http=http, app=app, clock=clock, mock=mock_client)


async def test_the_provider_credential_never_appears_in_a_page(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    async with _gateway_with(
        database_url, mock_url, mock_client, tmp_path, mock_provider_token=SECRET
    ) as gw:
        ok = await _op(gw, {"name": "fast"})
        stuck = await _op(gw, {"name": "create_timeout"}, deadlines={"create_seconds": 60})
        await gw.run_until_done(ok)
        await gw.run_until_done(stuck, step=10)
        detail = await _html(gw, f"/operations/{ok}")
        assert "[redacted]" in detail  # the Authorization header was sent, and is masked
        for url in ("/operations", "/operations/attention", f"/operations/{stuck}"):
            assert SECRET not in await _html(gw, url)
        assert SECRET not in detail


async def test_keys_mode_without_a_key_is_a_401_page(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    async with _gateway_with(database_url, mock_url, mock_client, tmp_path, auth="keys") as gw:
        page = await _html(gw, "/operations", status=401)
        assert "operator key" in page and "/login" in page
