"""A bundled profile's fake on a real server, and an agent driving the gateway against it.

A test module names its profile (`NAME`); the fake for it (jobgate_fakes/providers) is served
for the whole module and reset before each test, and the gateway's environment points
the profile at it (base-URL variable and credential) before the gateway starts. Helpers
read what an agent reads: /wait, /result, /errors (every page), /history.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest

from jobgate_fakes.providers import create_app
from jobgate_fakes.providers.settings import FakeSettings
from tests.conftest import Gateway
from tests.support.bundled_fakes import FAKES
from tests.support.generic_agent import Tally, bodies_in
from tests.support.servers import serve_app

KEY = "fake-provider-key-0123456789"
# Profiles whose counts are not items a line can list: Cloud Translation counts characters
# (and writes each failed file's errors to Cloud Storage, never into the operation).
COUNTS_NOT_ITEMS = {"google_translate"}
STEP = 700.0  # seconds per tick: past the bundled profiles' 600 s polling cap


@pytest.fixture(scope="module")
def served(request: pytest.FixtureRequest) -> Iterator[str]:
    fake_name = FAKES[request.module.NAME][0]
    with serve_app(create_app(fake_name, FakeSettings(api_key=KEY))) as url:
        yield url


@pytest.fixture
async def fake(
    request: pytest.FixtureRequest, served: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[httpx2.AsyncClient]:
    """The fake's control API, from a clean slate; the gateway's env points at the fake."""
    _, base_env, key_env = FAKES[request.module.NAME]
    monkeypatch.setenv(base_env, served)
    monkeypatch.setenv(key_env, KEY)
    for name, value in getattr(request.module, "EXTRA_ENV", {}).items():
        monkeypatch.setenv(name, value)
    async with httpx2.AsyncClient(base_url=served, timeout=10) as control:
        assert (await control.post("/_fake/reset")).status_code == 200
        yield control


@pytest.fixture
def gateway_settings(fake: httpx2.AsyncClient) -> dict[str, Any]:
    """The gateway is built after the fake's env is set (its profiles read it at start)."""
    return {}


async def start(gateway: Gateway, provider: str, input: dict[str, Any]) -> dict[str, Any]:
    """POST /v1/operations for kind `batch`, as an agent would; the 202 body."""
    body = {"provider": provider, "kind": "batch", "input": input}
    r = await gateway.http.post(
        "/v1/operations", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
    )
    assert r.status_code == 202, r.text
    made = dict(r.json())
    assert made["done"] is False
    return made


async def finish(
    gateway: Gateway, op_id: str, max_ticks: int = 60, step: float = STEP
) -> dict[str, Any]:
    """Tick until done, then read the body through /wait as an agent would."""
    await gateway.run_until_done(op_id, step=step, max_ticks=max_ticks)
    r = await gateway.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 1})
    assert r.status_code == 200, r.text
    done = dict(r.json())
    await honest(gateway, done)
    return done


async def honest(gateway: Gateway, done: dict[str, Any]) -> None:
    """What every finished operation of every profile must hold: success only with
    nothing failed, nothing left and nothing listed at /errors; every item counted as
    failed listed at /errors (the provider's own lines for the ones it never ran, where
    it writes them, may add to that, never take from it)."""
    summary = done.get("result_summary") or {}
    listed = await errors_of(gateway, done["operation_id"])
    backed(done, listed)
    if done["outcome"] == "succeeded":
        assert not summary.get("failed") and not summary.get("not_processed"), done
        assert listed == [], listed
        return
    never_success(done)
    if done["provider"] not in COUNTS_NOT_ITEMS:
        assert len(listed) >= int(summary.get("failed") or 0), (summary, listed)


def backed(done: dict[str, Any], listed: list[dict[str, Any]]) -> None:
    """Every count is backed (docs/agent-api.md, "Counts and /errors"): nothing points at
    an empty `/errors`, and a count of items that did not succeed that `/errors` does not
    list says that no per-item list exists."""
    summary = done.get("result_summary") or {}
    points = "/errors" in done["message"] or "/errors" in str(done.get("next_action") or "")
    if not listed:
        assert not points and done.get("errors_url") is None, done
        if int(summary.get("failed") or 0) + int(summary.get("not_processed") or 0):
            message = done["message"]
            assert "lists no failed" in message or "no per-item list" in message, message
    else:
        assert done.get("errors_url") is not None, done


async def fault(fake: httpx2.AsyncClient, **spec: Any) -> None:
    r = await fake.post("/_fake/faults", json=spec)
    assert r.status_code == 200, r.text


async def errors_of(gateway: Gateway, op_id: str) -> list[dict[str, Any]]:
    """Every failed item, following the bounded pages of /errors one item at a time."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 1} | ({"cursor": cursor} if cursor else {})
        r = await gateway.http.get(f"/v1/operations/{op_id}/errors", params=params)
        assert r.status_code == 200, r.text
        page = r.json()
        items += [entry["item"] for entry in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


async def history(gateway: Gateway, op_id: str) -> list[dict[str, Any]]:
    r = await gateway.http.get(f"/v1/operations/{op_id}/history")
    assert r.status_code == 200, r.text
    return list(r.json()["items"])


def never_success(body: dict[str, Any]) -> None:
    """Anything not processed or failed is never "you may report success"."""
    assert "may report success" not in body["message"].lower(), body["message"]
    assert body["outcome"] != "succeeded" and body["status"] != "succeeded"


def ended_as(body: dict[str, Any], state: str, status: str = "", outcome: str = "") -> None:
    """The operation's state, status and outcome (each defaulting to the one before)."""
    status = status or state
    outcome = outcome or status
    assert (body["state"], body["status"], body["outcome"]) == (state, status, outcome), body


def summary_is(
    body: dict[str, Any], *, processed: int, succeeded: int, failed: int, not_processed: int
) -> None:
    """`result_summary`, every count of it."""
    assert body["result_summary"] == {
        "processed": processed,
        "succeeded": succeeded,
        "failed": failed,
        "not_processed": not_processed,
    }, body["result_summary"]


@pytest.fixture
async def gateway(gateway: Gateway) -> AsyncIterator[Gateway]:
    """The gateway, with every operation body a test here reads from it also read by the
    generic keyword agent (tests/support/generic_agent.py, rules from the contract's three
    situations alone): every fake, with every fault these tests queue, must lead it to
    the situation the body's fields say, never to a false success, never stuck."""
    tally = Tally()

    async def read_it(response: httpx2.Response) -> None:
        if "json" not in response.headers.get("content-type", ""):
            return
        await response.aread()
        where = f"{response.request.method} {response.request.url.path}"
        for body in bodies_in(response.json()):
            tally.check(body, where)

    gateway.http.event_hooks["response"].append(read_it)
    yield gateway
    gateway.http.event_hooks["response"].remove(read_it)
    assert tally.false_successes == 0 and tally.stuck == 0 and not tally.misses, tally.misses
    assert tally.read > 0 or not tally.jobs  # it read what the test read
