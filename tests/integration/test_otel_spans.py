"""OpenTelemetry spans (JOBGATE_OTEL=on) after scenarios run through the HTTP API.

The SDK's InMemorySpanExporter stands in for OTLP (`tracing.export_to`); it is read
after the app's lifespan has ended, so these tests also show that shutdown flushes the
BatchSpanProcessor. The mock provider here requires a bearer token, so every call the
spans describe carried the credential, and no attribute may hold it.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from app.core.obs import tracing
from app.core.runtime.clock import FakeClock
from tests.conftest import Gateway, make_settings
from tests.support.servers import serve_app

TOKEN = "sk-mock-otel-" + uuid.uuid4().hex  # the credential no span may carry
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
AGENT_SPAN = "00f067aa0ba902b7"


@pytest.fixture(scope="module")
def token_mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A mock provider that answers only calls with `Authorization: Bearer TOKEN`."""
    from jobgate_fakes.mock.app import create_app as create_mock
    from jobgate_fakes.mock.settings import MockSettings

    state = tmp_path_factory.mktemp("otel_mock") / "mock.db"
    with serve_app(create_mock(MockSettings(state_path=str(state), provider_token=TOKEN))) as url:
        yield url


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    tracing.export_to(memory)
    try:
        yield memory
    finally:
        tracing.export_to(None)
        tracing.shutdown()


@pytest.fixture
def traced(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str], Any]:
    """Run the gateway (tracing on, from the environment) against the provider at `url`."""
    monkeypatch.setenv("JOBGATE_OTEL", "on")
    monkeypatch.setenv("JOBGATE_MOCK_PROVIDER_TOKEN", TOKEN)

    @asynccontextmanager
    async def run(url: str) -> AsyncIterator[Gateway]:
        from app.main import create_app

        clock = FakeClock()
        settings = make_settings(database_url, url, tmp_path)
        assert settings.otel and settings.mock_provider_token == TOKEN
        app = create_app(settings, clock=clock, run_observer=False)
        async with app.router.lifespan_context(app):
            assert tracing.enabled()
            asgi = httpx2.ASGITransport(app=app)
            with httpx2.Client(base_url=url, timeout=10) as mock:
                async with httpx2.AsyncClient(transport=asgi, base_url="http://127.0.0.1") as http:
                    yield Gateway(http=http, app=app, clock=clock, mock=mock)
        assert not tracing.enabled()  # the lifespan shut it down (and flushed)

    return run


def create_body(scenario: dict[str, Any]) -> dict[str, Any]:
    return {"provider": "mock", "kind": "report", "input": {"scenario": scenario}}


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def calls(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def assert_no_secret(spans: tuple[ReadableSpan, ...]) -> None:
    """No attribute, event, status or resource value anywhere holds the credential."""
    assert spans
    for span in spans:
        values: list[Any] = [span.name, span.status.description]
        values += list(attrs(span).values())
        values += list(span.resource.attributes.values())
        for event in span.events:
            values += [event.name, *(event.attributes or {}).values()]
        for value in values:
            assert TOKEN not in str(value), (span.name, value)
            assert "Bearer" not in str(value), (span.name, value)


async def test_spans_join_the_agents_trace(
    traced: Callable[[str], Any], token_mock: str, exporter: InMemorySpanExporter
) -> None:
    async with traced(token_mock) as gw:
        r = await gw.http.post(
            "/v1/operations",
            json=create_body({"name": "slow", "polls": 2}),
            headers={"Idempotency-Key": "otel-1", "traceparent": f"00-{TRACE}-{AGENT_SPAN}-01"},
        )
        assert r.status_code == 202, r.text
        op_id = r.json()["operation_id"]
        assert r.json()["trace_id"] == f"tr_{TRACE}"
        assert (await gw.run_until_done(op_id))["state"] == "succeeded"
        history = (await gw.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    spans = exporter.get_finished_spans()

    # Every span is in the agent's trace, and jobgate's spans are jobgate's.
    assert {s.context.trace_id for s in spans} == {int(TRACE, 16)}
    assert {s.resource.attributes["service.name"] for s in spans} == {"jobgate"}
    assert all(attrs(s)["jobgate.operation_id"] == op_id for s in spans)
    assert all(s.parent is None for s in spans)  # roots: an operation outlives any request

    # One CLIENT span per provider call, with its attributes.
    create, status, result = (calls(spans, f"provider.{c}") for c in ("create", "status", "result"))
    assert len(create) == 1 and len(status) >= 2 and len(result) == 1
    for span in create + status + result:
        a = attrs(span)
        assert span.kind is SpanKind.CLIENT
        assert a["jobgate.provider"] == "mock" and a["jobgate.outcome"] == "ok"
        assert a["http.request.method"] in {"GET", "POST"}
        assert 200 <= a["http.response.status_code"] < 300
        assert span.status.status_code is StatusCode.UNSET
        assert span.end_time is not None and span.start_time is not None
        assert span.end_time >= span.start_time
    assert attrs(create[0])["http.request.method"] == "POST"

    # The traceparent each call carried names that call's span (the mock provider does
    # not record request headers; history keeps what was sent, and the mock refuses
    # calls without the token, so these are the calls that reached it).
    sent = []
    for item in history:
        if item["kind"] == "exchange":
            headers = {k.lower(): v for k, v in item["data"]["request_headers"].items()}
            sent.append(headers["traceparent"])
    provider_spans = create + status + result
    assert sorted(sent) == sorted(f"00-{TRACE}-{s.context.span_id:016x}-01" for s in provider_spans)
    assert AGENT_SPAN not in {f"{s.context.span_id:016x}" for s in spans}

    # One span per applied transition, from and to.
    moves = [
        (attrs(s).get("jobgate.state.from"), attrs(s)["jobgate.state.to"])
        for s in calls(spans, "operation.transition")
    ]
    assert moves[0] == (None, "create_pending")
    assert ("create_pending", "accepted") in moves
    assert moves[-1] == ("result_collecting", "succeeded")
    transitions = [r for r in history if r["kind"] == "transition"]
    assert len(moves) == len(transitions)
    assert_no_secret(spans)


async def test_without_traceparent_the_operations_own_trace(
    traced: Callable[[str], Any], token_mock: str, exporter: InMemorySpanExporter
) -> None:
    async with traced(token_mock) as gw:
        r = await gw.http.post(
            "/v1/operations",
            json=create_body({"name": "accept_then_5xx"}),
            headers={"Idempotency-Key": "otel-2"},
        )
        assert r.status_code == 202, r.text
        op_id, trace_id = r.json()["operation_id"], r.json()["trace_id"]
    spans = exporter.get_finished_spans()
    assert {f"tr_{s.context.trace_id:032x}" for s in spans} == {trace_id}
    [create] = calls(spans, "provider.create")
    a = attrs(create)
    assert a["jobgate.operation_id"] == op_id and a["jobgate.outcome"] == "ambiguous"
    assert a["http.response.status_code"] >= 500 and a["error.type"] == str(
        a["http.response.status_code"]
    )
    assert create.status.status_code is StatusCode.ERROR
    assert calls(spans, "operation.transition")
    assert_no_secret(spans)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_transport_error_is_an_error_span(
    traced: Callable[[str], Any], exporter: InMemorySpanExporter
) -> None:
    async with traced(f"http://127.0.0.1:{closed_port()}") as gw:  # connection refused
        r = await gw.http.post(
            "/v1/operations", json=create_body({"name": "fast"}), headers={"Idempotency-Key": "x"}
        )
        assert r.status_code == 202, r.text
    spans = exporter.get_finished_spans()
    creates = calls(spans, "provider.create")
    assert creates
    for create in creates:
        a = attrs(create)
        assert a["jobgate.outcome"] == "transport_error" and a["error.type"] == "transport_error"
        assert "http.response.status_code" not in a
        assert create.status.status_code is StatusCode.ERROR
    assert_no_secret(spans)
