"""Dev mode (no keys) against a web page: a rebound host name is served nothing, another
origin can act on nothing, and a simple cross-site POST cancels nothing (docs/security.md).

A page that rebinds its own name to 127.0.0.1 sends `Host: <its name>` and, on a POST,
`Origin: http://<its name>:<port>`: to the browser that is one origin, which is also why
the operator pages' own same-origin check passed before.
"""

from __future__ import annotations

import pytest

from tests.conftest import Gateway

REBOUND = "rebind.attacker.test:8080"


async def running(gateway: Gateway) -> str:
    r = await gateway.start({"name": "never_finishes"})
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


async def state_of(gateway: Gateway, op_id: str) -> str:
    return str((await gateway.http.get(f"/v1/operations/{op_id}")).json()["state"])


async def test_a_rebound_host_is_served_nothing(gateway: Gateway) -> None:
    op_id = await running(gateway)
    before = await state_of(gateway, op_id)
    rebound = {"Host": REBOUND, "Origin": f"http://{REBOUND}"}
    reads = [
        await gateway.http.get(path, headers={"Host": REBOUND})
        for path in ("/v1/operations", f"/v1/operations/{op_id}", "/operations", "/metrics")
    ]
    cancels = [
        await gateway.http.post(
            f"/v1/operations/{op_id}/cancel", json={"reason": "page"}, headers=rebound
        ),
        await gateway.http.post(
            f"/operations/{op_id}/cancel", data={"reason": "page"}, headers=rebound
        ),
        await gateway.http.post("/mcp", json={}, headers=rebound),
    ]
    for r in reads + cancels:
        assert r.status_code == 421, (r.request.url, r.text)
        assert r.json()["error"]["code"] == "host_not_allowed"
    assert await state_of(gateway, op_id) == before


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "text/plain", "Origin": "http://evil.example"},
        {"Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site"},
        {"Content-Type": "application/x-www-form-urlencoded", "Origin": "null"},
        {"Content-Type": "text/plain"},  # no browser header at all: still not JSON
        {},
    ],
)
async def test_a_simple_cross_site_post_cancels_nothing(
    gateway: Gateway, headers: dict[str, str]
) -> None:
    op_id = await running(gateway)
    before = await state_of(gateway, op_id)
    r = await gateway.http.post(
        f"/v1/operations/{op_id}/cancel", content=b'{"reason": "page"}', headers=headers
    )
    assert r.status_code in (403, 415), r.text
    code = r.json()["error"]["code"]
    assert code == ("json_required" if r.status_code == 415 else "cross_origin_refused")
    assert await state_of(gateway, op_id) == before


async def test_another_origin_cannot_read_either(gateway: Gateway) -> None:
    r = await gateway.http.get("/v1/operations", headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "cross_origin_refused"


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8080", "localhost:8080", "[::1]:8080", "127.8.0.1", "app.localhost:9"]
)
async def test_loopback_names_and_same_origin_json_are_served(gateway: Gateway, host: str) -> None:
    op_id = await running(gateway)
    same = {"Host": host, "Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"}
    assert (await gateway.http.get("/v1/operations", headers={"Host": host})).status_code == 200
    r = await gateway.http.post(
        f"/v1/operations/{op_id}/cancel", json={"reason": "mine"}, headers=same
    )
    assert r.status_code == 202, r.text


@pytest.mark.parametrize("gateway_settings", [{"auth": "keys"}])
async def test_with_keys_any_host_name_is_served(gateway: Gateway) -> None:
    r = await gateway.http.get("/v1/healthz", headers={"Host": "jobgate.example.com"})
    assert r.status_code == 200
    r = await gateway.http.get("/v1/operations", headers={"Host": "jobgate.example.com"})
    assert r.status_code == 401  # the key is the guard here
