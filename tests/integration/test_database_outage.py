"""A database out of reach is a clear answer (docs/operations.md, "When storage or the
database fails"): every route answers `503 database_unavailable` with Retry-After and
words true of the call, never a bare 500, nothing is recorded or sent, and the gateway
recovers by itself when the database is back. The gateway reaches PostgreSQL through a
proxy the test cuts; the server itself keeps running for the other tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import Gateway
from tests.support.tcp_proxy import TcpProxy, tcp_proxy

pytestmark = pytest.mark.postgres_only


@pytest.fixture
def proxy(database_url: str) -> Iterator[TcpProxy]:
    u = make_url(database_url)
    with tcp_proxy(u.host or "127.0.0.1", u.port or 5432) as p:
        yield p


@pytest.fixture
def gateway_settings(database_url: str, proxy: TcpProxy) -> dict[str, Any]:
    proxied = make_url(database_url).set(host="127.0.0.1", port=proxy.port)
    return {"database_url": proxied.render_as_string(hide_password=False)}


async def test_while_the_database_is_gone_every_answer_is_503_and_nothing_is_written(
    gateway: Gateway, proxy: TcpProxy
) -> None:
    assert (await gateway.http.get("/v1/operations")).status_code == 200
    proxy.cut()
    listed = await gateway.http.get("/v1/operations")
    created = await gateway.start({"name": "fast"}, key="during-the-outage")
    for r in (listed, created):
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "database_unavailable"
        assert r.headers["Retry-After"] == "30"
    assert listed.json()["error"]["message"].startswith("NOT read")  # a read changes nothing
    assert created.json()["error"]["message"].startswith("NOT started")  # no intent reached it
    assert created.json()["error"]["details"]["intent_recorded"] is False
    ready = await gateway.http.get("/v1/readyz")
    assert ready.status_code == 503
    proxy.restore()
    assert (await gateway.http.get("/v1/readyz")).status_code == 200
    items = (await gateway.http.get("/v1/operations")).json()["items"]
    assert items == []  # the refused create recorded nothing
    again = await gateway.start({"name": "fast"}, key="during-the-outage")
    assert again.status_code == 202, again.text
    assert gateway.jobs_for(again.json()["operation_id"]) != []
