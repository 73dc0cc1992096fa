"""OpenTelemetry spans, optional: JOBGATE_OTEL=on and the `otel` extra installed.

The hooks in app/core/obs/telemetry.py call `provider_call`, `transition` and `refused`
here; with tracing off (the default) each returns at once and nothing of the
OpenTelemetry SDK is imported. With it on, spans go through a BatchSpanProcessor to
the OTLP/HTTP exporter, which reads the standard OTEL_* variables (endpoint, headers,
timeout); `setup` runs where the app is wired and `shutdown` flushes on exit.

Every span belongs to its operation's trace: jobgate's trace id is `tr_` + the W3C
trace-id (app/core/obs/tracecontext.py), so an agent that sent `traceparent` finds these
spans in its own trace. An operation outlives any one request or process, so its spans
have no parent span: each is a root in the operation's trace, its ids chosen by a small
id generator (the SDK's extension point) from what the call site wants. A provider-call
span takes the span id the call's `traceparent` header carried, so the provider's side
of the job hangs under jobgate's span.

Attributes are names, ids, states, methods, status codes and outcomes only: never a
header, a body, a URL or a query string, so no credential can reach an exporter.
"""

from __future__ import annotations

import contextvars
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.obs import tracecontext
from app.core.runtime.refusal import StartRefused

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.sdk.trace.id_generator import IdGenerator
    from opentelemetry.trace import Span, SpanKind, Tracer

SERVICE_NAME = "jobgate"
INSTALL = "pip install 'jobgate[otel]'"
# Outcomes (app/core/obs/telemetry.py `provider_call`) after which the call's effect is unknown.
ERROR_OUTCOMES = frozenset({"ambiguous", "transport_error"})

# The ids the next span must take (None: random), set only around `start_span`.
_WANT_TRACE: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "jobgate_otel_trace", default=None
)
_WANT_SPAN: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "jobgate_otel_span", default=None
)


@dataclass
class _Tracing:
    provider: TracerProvider
    tracer: Tracer


_active: _Tracing | None = None
_exporter: SpanExporter | None = None  # set by `export_to`: the OTLP exporter's stand-in


def export_to(exporter: SpanExporter | None) -> None:
    """Spans go to `exporter` instead of OTLP from the next `setup` on (None: OTLP again).

    For tests: the SDK's InMemorySpanExporter."""
    global _exporter
    _exporter = exporter


def require(on: bool) -> None:
    """Refuse to start when tracing is on and its packages are not installed."""
    if not on:
        return
    try:
        import opentelemetry.sdk.trace  # noqa: F401

        if _exporter is None:
            import opentelemetry.exporter.otlp.proto.http.trace_exporter  # noqa: F401
    except ImportError as exc:
        raise StartRefused(
            f"JOBGATE_OTEL=on but OpenTelemetry is not installed ({exc.name}): {INSTALL}"
        ) from None


def setup(on: bool) -> None:
    """Start exporting spans when `on` (any earlier set-up is shut down first)."""
    shutdown()
    if not on:
        return
    require(on)
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    exporter = _exporter
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()  # endpoint, headers, timeout: the OTEL_* variables
    name = os.environ.get("OTEL_SERVICE_NAME") or SERVICE_NAME
    # shutdown_on_exit: a process that never reaches `shutdown` (the standalone observer
    # ends with its event loop) still flushes at interpreter exit.
    provider = TracerProvider(
        resource=Resource.create({"service.name": name}), id_generator=_ids(), shutdown_on_exit=True
    )
    provider.add_span_processor(BatchSpanProcessor(exporter))
    global _active
    _active = _Tracing(provider, provider.get_tracer("jobgate"))


def shutdown() -> None:
    """Flush what is queued and stop; a no-op when tracing is off."""
    global _active
    active, _active = _active, None
    if active is not None:
        active.provider.shutdown()


def enabled() -> bool:
    return _active is not None


def provider_call(
    provider: str,
    call: str,
    *,
    operation_id: str | None,
    trace_id: str | None,
    traceparent: str | None,
    method: str,
    status: int | None,
    outcome: str,
    seconds: float,
) -> None:
    """One CLIENT span per provider call sent, ending now and lasting `seconds`; its span
    id is the one the call's `traceparent` carried when that is in the operation's trace."""
    if _active is None:
        return
    from opentelemetry.trace import SpanKind, Status, StatusCode

    sent = tracecontext.parse(traceparent)
    w3c = _w3c(trace_id)
    span_id = int(sent.parent_id, 16) if sent is not None and sent.trace_id == w3c else None
    attributes: dict[str, str | int] = {
        "jobgate.provider": provider,
        "jobgate.call": call,
        "http.request.method": method,
        "jobgate.outcome": outcome,
        **_ids_of(operation_id, trace_id),
    }
    if status is not None:
        attributes["http.response.status_code"] = status
    end = time.time_ns()
    span = _start(
        f"provider.{call}",
        w3c,
        span_id,
        kind=SpanKind.CLIENT,
        attributes=attributes,
        start_time=end - int(seconds * 1e9),
    )
    if outcome in ERROR_OUTCOMES:
        span.set_attribute("error.type", str(status) if status is not None else outcome)
        span.set_status(Status(StatusCode.ERROR, outcome))
    span.end(end_time=end)


def transition(
    op_id: str,
    trace_id: str | None,
    from_state: str | None,
    to: str,
    *,
    actor: str,
    version: int,
) -> None:
    """One span per applied transition (zero length: the moment it committed)."""
    if _active is None:
        return
    attributes: dict[str, str | int] = {
        "jobgate.state.to": to,
        "jobgate.actor": actor,
        "jobgate.version": version,
        **_ids_of(op_id, trace_id),
    }
    if from_state is not None:
        attributes["jobgate.state.from"] = from_state
    _start("operation.transition", _w3c(trace_id), None, attributes=attributes).end()


def refused(op_id: str, trace_id: str | None, from_state: str, to: str) -> None:
    """A transition the state machine refused: a span with error status."""
    if _active is None:
        return
    from opentelemetry.trace import Status, StatusCode

    attributes = {"jobgate.state.from": from_state, "jobgate.state.to": to}
    attributes.update(_ids_of(op_id, trace_id))
    span = _start("operation.refused_transition", _w3c(trace_id), None, attributes=dict(attributes))
    span.set_status(Status(StatusCode.ERROR, "transition refused"))
    span.end()


def _w3c(trace_id: str | None) -> str | None:
    """The 32 hex digits of a `tr_...` trace id; None for one made before they were W3C."""
    if trace_id is None or tracecontext.outgoing(trace_id) is None:
        return None
    return trace_id.removeprefix("tr_")


def _ids_of(operation_id: str | None, trace_id: str | None) -> dict[str, str]:
    ids = {"jobgate.operation_id": operation_id, "jobgate.trace_id": trace_id}
    return {k: v for k, v in ids.items() if v is not None}


def _start(
    name: str,
    trace_hex: str | None,
    span_id: int | None,
    *,
    attributes: dict[str, str | int],
    kind: SpanKind | None = None,
    start_time: int | None = None,
) -> Span:
    """A root span in the trace `trace_hex` (a fresh trace when None), with `span_id`."""
    from opentelemetry.context import Context
    from opentelemetry.trace import SpanKind

    assert _active is not None
    t1 = _WANT_TRACE.set(int(trace_hex, 16) if trace_hex is not None else None)
    t2 = _WANT_SPAN.set(span_id)
    try:
        # An empty context: never a child of whatever span happens to be current.
        return _active.tracer.start_span(
            name,
            context=Context(),
            kind=kind if kind is not None else SpanKind.INTERNAL,
            attributes=attributes,
            start_time=start_time,
        )
    finally:
        _WANT_TRACE.reset(t1)
        _WANT_SPAN.reset(t2)


def _ids() -> IdGenerator:
    """The SDK's random ids, except where `_start` asked for a given trace or span id."""
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    class _Wanted(RandomIdGenerator):
        def generate_trace_id(self) -> int:
            wanted = _WANT_TRACE.get()
            return wanted if wanted is not None else super().generate_trace_id()

        def generate_span_id(self) -> int:
            wanted = _WANT_SPAN.get()
            return wanted if wanted is not None else super().generate_span_id()

    return _Wanted()
