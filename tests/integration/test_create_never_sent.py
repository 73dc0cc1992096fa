"""A create whose request never left is not ambiguous: it goes again, or ends `failed`
with nothing sent (docs/single-create.md, "Nothing was made").

Through the real driver and the real outbound client, for a provider with neither a
token nor a lookup (`mock_blind`, `single_create: none`), where an ambiguous create
would go to a person at once: a port with nothing listening (connection refused), and a
host name answered by an injected resolver (never outside DNS) that first fails, then
answers with the real mock provider's address. Jobs are counted at the mock.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.core.runtime.clock import FakeClock
from tests.conftest import Gateway, make_settings
from tests.support.single_create import PROFILES, exchanges, transitions


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A port bound but never listening: a connect to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


async def start(gw: Gateway, **extra: Any) -> dict[str, Any]:
    body = {"provider": "mock_blind", "kind": "report", "input": {"scenario": {"name": "fast"}}}
    r = await gw.http.post(
        "/v1/operations", json={**body, **extra}, headers={"Idempotency-Key": uuid.uuid4().hex}
    )
    assert r.status_code == 202, r.text
    return dict(r.json())


async def history(gw: Gateway, op_id: str) -> list[dict[str, Any]]:
    return list((await gw.http.get(f"/v1/operations/{op_id}/history")).json()["items"])


class Names:
    """An injected resolver: no name resolves until `answer` is set."""

    def __init__(self) -> None:
        self.answer: str | None = None
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        if self.answer is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [self.answer]


@pytest.fixture
def names() -> Names:
    return Names()


@pytest.fixture
async def named_gateway(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path, names: Names
) -> AsyncIterator[Gateway]:
    """The gateway in-process, the mock provider known only as provider.test (resolved
    by `names`)."""
    from app.main import create_app

    port = httpx2.URL(mock_url).port
    settings = make_settings(
        database_url,
        f"http://provider.test:{port}",
        tmp_path,
        profiles_dir=PROFILES,
    )
    clock = FakeClock()
    app = create_app(settings, clock=clock, run_observer=False, resolver=names)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield Gateway(http=http, app=app, clock=clock, mock=mock_client)


@pytest.fixture
def gateway_settings(refusing_port: int) -> dict[str, Any]:
    return {"profiles_dir": PROFILES, "mock_provider_url": f"http://127.0.0.1:{refusing_port}"}


async def test_a_refused_connection_goes_again_then_fails_saying_nothing_was_sent(
    gateway: Gateway,
) -> None:
    made = await start(gateway, deadlines={"create_seconds": 60})
    op_id = made["operation_id"]
    assert (made["state"], made["done"]) == ("create_pending", False), made
    assert made["guarantees"]["single_create"] == "none"
    await gateway.tick(5)  # the mock profiles' backoff starts at 2 s (jitter below it)
    rows = await history(gateway, op_id)
    sent = exchanges(rows, "create")
    assert len(sent) == 2, [r["cause"] for r in rows]
    assert all("ConnectError" in (e["data"]["error"] or "") for e in sent)
    assert all(e["data"]["status_code"] is None for e in sent)
    final = await gateway.run_until_done(op_id, step=5)
    assert (final["state"], final["status"]) == ("failed", "failed"), final
    error = final["error"]
    assert error["code"] == "create_not_sent"
    assert "nothing was sent and nothing was started" in error["message"]
    assert "FAILED" in final["message"] and "NEEDS A HUMAN" not in final["message"]
    rows = await history(gateway, op_id)
    path = transitions(rows)
    assert "create_unknown" not in path and "create_unconfirmed" not in path, path
    assert path[-1] == "failed"
    assert rows_of(rows, "resend_refused") == []
    assert gateway.jobs_for(op_id) == []  # the mock never heard of it


async def test_a_name_that_does_not_resolve_goes_again_and_makes_one_job(
    named_gateway: Gateway, names: Names
) -> None:
    gw = named_gateway
    made = await start(gw)
    op_id = made["operation_id"]
    assert made["state"] == "create_pending", made
    assert names.asked == ["provider.test"]
    [refused] = exchanges(await history(gw, op_id), "create")
    said = refused["data"]["error"]
    assert "ConnectError" in said and "provider.test" in said
    names.answer = "127.0.0.1"  # the name resolves again
    final = await gw.run_until_done(op_id)
    assert final["state"] == "succeeded", final
    assert gw.jobs_for(op_id) == [final["remote_job_id"]]  # two creates, one job
    rows = await history(gw, op_id)
    assert len(exchanges(rows, "create")) == 2
    assert [r["data"]["attempt"] for r in rows_of(rows, "create_resend")] == [2]


def rows_of(items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [i for i in items if i["kind"] == kind]
