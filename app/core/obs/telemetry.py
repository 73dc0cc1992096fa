"""What jobgate tells operators about its work: one hook per event, a log line and a metric.

Existing modules call one function here at the point where the event happens (the
ledger for transitions, the wire for provider calls, the claim for poll lateness and
lease takeovers, ...), so the log line and the counter can never disagree and the
domain code stays free of Prometheus and OpenTelemetry (spans, when JOBGATE_OTEL=on, are
made in app/core/obs/tracing.py from the same hooks). Metrics use the official `prometheus_client`
default registry; gauges read from the database are filled in at scrape time
(app/health/metrics_route.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime

from prometheus_client import Counter, Gauge, Histogram

from app.core.obs import tracing
from app.core.obs.logs import bind, current

log = logging.getLogger("jobgate.operations")
calls_log = logging.getLogger("jobgate.provider")

# Seconds; provider calls range from a local mock (ms) to a slow upload (tens of s).
CALL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
# Seconds an operation waited past its due time before an observer claimed it.
LATENESS_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

TRANSITIONS = Counter(
    "jobgate_transitions", "State transitions applied, by from and to state.", ["from_state", "to"]
)
REFUSED = Counter(
    "jobgate_refused_transitions",
    "Transitions the state machine refused (a bug or a provider breaking its contract).",
    ["from_state", "to"],
)
PROVIDER_CALLS = Counter(
    "jobgate_provider_calls",
    "Provider HTTP calls sent, by provider, call (create|status|cancel|result|lookup) and outcome.",
    ["provider", "operation", "outcome"],
)
PROVIDER_SECONDS = Histogram(
    "jobgate_provider_call_seconds",
    "Provider call latency in seconds, by provider and call.",
    ["provider", "operation"],
    buckets=CALL_BUCKETS,
)
POLL_LATENESS = Histogram(
    "jobgate_poll_lateness_seconds",
    "How late an observer took up a due operation (claim or held poll time minus due time).",
    buckets=LATENESS_BUCKETS,
)
HELD_POLLS = Counter(
    "jobgate_held_polls",
    "Steps of an operation the observer held under its lease between two close polls "
    "(no claim; app/operations/hold.py).",
)
LEASE_TAKEOVERS = Counter(
    "jobgate_lease_takeovers",
    "Claims of an operation whose previous holder let its lease lapse (died or stalled).",
)
FENCED_WRITES = Counter(
    "jobgate_fenced_writes",
    "Writes refused by the lease fence: the writer had lost its lease or the row moved on.",
)
WAITS_IN_FLIGHT = Gauge("jobgate_waits_in_flight", "Agent /wait calls being held open right now.")
DATABASE_UP = Gauge(
    "jobgate_database_up", "1 when the last /metrics scrape could read the database, else 0."
)
EVENT_STREAMS = Gauge(
    "jobgate_event_streams_open", "Event streams (/events) being held open right now."
)
CALLBACKS = Counter(
    "jobgate_callback_deliveries",
    "Completion callback delivery attempts, by outcome (delivered|retry|gave_up).",
    ["outcome"],
)
OPERATIONS = Gauge(
    "jobgate_operations",
    "Operations that are not finished (in flight or needing attention), by state; "
    "read from the database at scrape time. Finished totals: jobgate_transitions_total.",
    ["state"],
)
CLOCK_OFFSET = Gauge(
    "jobgate_clock_offset_seconds",
    "The database's clock minus this host's, as last measured (app/core/db/db_clock.py); "
    "every time this process computes counts from the database's reading, not this host's.",
)
CLOCK_SKEWED = Gauge(
    "jobgate_clock_skewed",
    "1 while the measured offset is beyond JOBGATE_CLOCK_SKEW_LIMIT_SECONDS, or the wall "
    "clock jumped since the last measurement (this process claims no work then), else 0.",
)
# Seconds from an operation's intent to its end: a fast mock (s) to a day-long batch.
OPERATION_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0,
                     21600.0, 86400.0)  # fmt: skip
OPERATION_SECONDS = Histogram(
    "jobgate_operation_seconds",
    "Seconds from an operation's intent to its end (a done state or one that needs a "
    "person), by provider, kind and the state it ended in.",
    ["provider", "kind", "state"],
    buckets=OPERATION_BUCKETS,
)
NEEDS_ATTENTION = Gauge(
    "jobgate_needs_attention",
    "Operations in the attention inbox (needs-attention states and unacknowledged partial "
    "results); read from the database at scrape time.",
)


def transition(
    op_id: str,
    trace_id: str | None,
    from_state: str | None,
    to: str,
    *,
    actor: str,
    cause: str,
    version: int,
) -> None:
    """One INFO line and one count per applied transition (the ledger's single write path)."""
    TRANSITIONS.labels(from_state or "none", to).inc()
    tracing.transition(op_id, trace_id, from_state, to, actor=actor, version=version)
    with bind(op_id, trace_id):
        log.info(
            "%s -> %s: %s",
            from_state or "(new)",
            to,
            cause,
            extra={"event": "transition", "from_state": from_state, "to_state": to,
                   "actor": actor, "version": version},
        )  # fmt: skip


def operation_ended(provider: str, kind: str, state: str, seconds: float) -> None:
    """An operation reached a done state (or one that needs a person) `seconds` after
    its intent."""
    OPERATION_SECONDS.labels(provider, kind, state).observe(max(0.0, seconds))


def refused(op_id: str, trace_id: str | None, from_state: str, to: str, reason: str) -> None:
    REFUSED.labels(from_state, to).inc()
    tracing.refused(op_id, trace_id, from_state, to)
    with bind(op_id, trace_id):
        log.warning(
            "refused transition %s -> %s: %s",
            from_state,
            to,
            reason,
            extra={"event": "refused_transition"},
        )


def provider_call(
    provider: str,
    operation: str,
    *,
    method: str,
    target: str,
    status: int | None,
    outcome: str,
    seconds: float,
    trace_id: str | None = None,
    traceparent: str | None = None,
) -> None:
    """A call that was sent. `target` is scheme, host and path only: no query, no headers,
    so no credential a profile puts in either can reach a log line. `traceparent` is the
    header the call carried: its span id becomes the call's span id."""
    PROVIDER_CALLS.labels(provider, operation, outcome).inc()
    PROVIDER_SECONDS.labels(provider, operation).observe(seconds)
    tracing.provider_call(
        provider,
        operation,
        operation_id=current()[0],  # bound by the runner around each step
        trace_id=trace_id,
        traceparent=traceparent,
        method=method,
        status=status,
        outcome=outcome,
        seconds=seconds,
    )
    calls_log.info(
        "%s %s %s -> %s (%.0f ms)",
        provider,
        operation,
        method,
        status if status is not None else outcome,
        seconds * 1000,
        extra={"event": "provider_call", "provider": provider, "call": operation,
               "method": method, "url": target, "status": status, "outcome": outcome,
               "duration_ms": round(seconds * 1000, 1)},
    )  # fmt: skip


def claimed(now: datetime, due_times: Iterable[datetime | None], takeovers: int) -> None:
    """An observer claimed due operations: how late each was, how many were taken over."""
    for due in due_times:
        if due is not None:
            POLL_LATENESS.observe(max(0.0, (now - due).total_seconds()))
    if takeovers:
        LEASE_TAKEOVERS.inc(takeovers)
        log.info("took over %d operation(s) whose lease had lapsed", takeovers)


def clock_measured(offset: float, refusal: str | None, before: str | None) -> None:
    """The clock was measured against the database: WARNING while it is skewed (every
    measurement), one INFO line when it is back within its bound."""
    CLOCK_OFFSET.set(offset)
    CLOCK_SKEWED.set(1 if refusal else 0)
    if refusal:
        log.warning(
            "%s; this process claims no work until it is within the bound",
            refusal,
            extra={"event": "clock_skew", "offset_seconds": offset},
        )
    elif before:
        log.info(
            "clock within its bound again (offset %+.3f s); claiming work",
            offset,
            extra={"event": "clock_skew", "offset_seconds": offset},
        )


def clock_jumped(jump: float, refusal: str | None) -> None:
    """The wall clock moved against monotonic time beyond the bound: WARNING, once per
    jump (the measurement that follows logs whether the clock is trusted again)."""
    CLOCK_SKEWED.set(1)
    log.warning("%s", refusal, extra={"event": "clock_jump", "jump_seconds": jump})


def held_poll(now: datetime, due: datetime) -> None:
    """An observer took up an operation it held since its last step."""
    POLL_LATENESS.observe(max(0.0, (now - due).total_seconds()))
    HELD_POLLS.inc()


def fenced(op_id: str, trace_id: str | None, wanted: str) -> None:
    FENCED_WRITES.inc()
    with bind(op_id, trace_id):
        log.info(
            "write fenced off (lease lost or the row moved on): %s",
            wanted,
            extra={"event": "fenced"},
        )


def callback_attempt(
    op_id: str, trace_id: str | None, outcome: str, attempt: int, status: int | None
) -> None:
    CALLBACKS.labels(outcome).inc()
    level = logging.WARNING if outcome == "gave_up" else logging.INFO
    with bind(op_id, trace_id):
        log.log(
            level,
            "completion callback attempt %d: %s",
            attempt,
            outcome,
            extra={"event": "callback", "status": status},
        )
