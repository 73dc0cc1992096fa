"""What each client call does, written once for the sync and the async client.

A plan is a generator that yields what it needs (a `Call` to send, or a `Pause`) and
receives the answer (an `httpx2.Response`, or the `httpx2.TransportError` that sending
raised). `Client` and `AsyncClient` only drive plans, so the retry rules, the error
mapping and `start_and_wait` exist in one place and are tested without a network.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast
from urllib.parse import quote

import httpx2

from jobgate_client.errors import (
    ApiError,
    GatewayUnavailable,
    ServerError,
    UsageError,
    error_class,
)
from jobgate_client.outcomes import Outcome, done_outcome, still_running, with_outcome
from jobgate_client.types import (
    AttentionList,
    Deadlines,
    Decision,
    ErrorsPage,
    FailedItem,
    HistoryList,
    JsonValue,
    Operation,
    OperationList,
    ResultBody,
    Validation,
)

T = TypeVar("T")
WAIT_MARGIN_S = 10.0  # read timeout of a /wait call = its timeout + this (the gateway holds it)
WAIT_CALL_CAP_S = 60.0  # start_and_wait holds one /wait at most this long, then asks again
FAILED_ITEMS_PAGE = 50  # failed items CompletedWithErrors carries (the first page)


@dataclass(frozen=True)
class Call:
    """One HTTP request to the gateway (path relative to its base URL)."""

    method: str
    path: str
    params: dict[str, str] | None = None
    json: Any = None
    headers: dict[str, str] | None = None
    read_timeout: float | None = None  # None: the client's default


@dataclass(frozen=True)
class Pause:
    """Sleep this many seconds before the next step (a retry backoff)."""

    seconds: float


Answer = httpx2.Response | httpx2.TransportError | None
Plan = Generator[Call | Pause, Answer, T]


@dataclass(frozen=True)
class RetryPolicy:
    """How `start_and_wait` retries its own calls on network errors, 429 and 5xx:
    at most `attempts` tries per call, sleeping base * factor**n (capped, with
    +/- `jitter` spread; a `Retry-After` up to the cap wins). A create is retried with
    the SAME idempotency key, so a retry never starts the work twice."""

    attempts: int = 4
    base_delay: float = 0.5
    factor: float = 2.0
    max_delay: float = 8.0
    jitter: float = 0.2
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to sleep after failed try number `attempt` (1-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        raw = min(self.base_delay * self.factor ** (attempt - 1), self.max_delay)
        return raw * (1 + self.jitter * (2 * self.rng.random() - 1))


NO_RETRY = RetryPolicy(attempts=1)


def op_path(op_id: str, tail: str = "") -> str:
    """`/v1/operations/{id}{tail}` with the id escaped (ids come from callers and models)."""
    if not op_id:
        raise UsageError("operation_id is required")
    return f"/v1/operations/{quote(op_id, safe='')}{tail}"


def parse(answer: Answer) -> Any:
    """The JSON of a 2xx answer; otherwise the typed exception for it."""
    if answer is None:
        raise RuntimeError("a plan was resumed without an answer")  # a driver bug
    if isinstance(answer, httpx2.TransportError):
        raise GatewayUnavailable(f"could not reach the gateway: {answer!r}")
    if answer.is_success:
        return answer.json()
    raise to_error(answer)


def to_error(response: httpx2.Response) -> ApiError:
    """The exception for an error answer: the gateway's code, message, details, and the
    operation body when it was sent beside the error (contract v2)."""
    try:
        data = response.json()
    except ValueError:
        data = None
    err = data.get("error") if isinstance(data, dict) else None
    if not isinstance(err, dict):
        err = {"code": f"http_{response.status_code}", "message": response.text[:500]}
    operation = data.get("operation") if isinstance(data, dict) else None
    return error_class(response.status_code)(
        response.status_code,
        str(err.get("code") or f"http_{response.status_code}"),
        str(err.get("message") or ""),
        err.get("details") if isinstance(err.get("details"), dict) else None,
        cast(Operation, operation) if isinstance(operation, dict) else None,
    )


def _retryable(answer: Answer) -> bool:
    if isinstance(answer, httpx2.TransportError):
        return True
    return answer is not None and (answer.status_code == 429 or answer.status_code >= 500)


def _retry_after(answer: Answer) -> float | None:
    if isinstance(answer, httpx2.Response):
        try:
            return float(answer.headers.get("retry-after", ""))
        except ValueError:
            return None
    return None


def send(
    call: Call,
    policy: RetryPolicy = NO_RETRY,
    *,
    budget_left: Callable[[], float] | None = None,
) -> Plan[Any]:
    """Send `call`, retrying per `policy`; returns the parsed JSON or raises.

    Retries stop early when `budget_left()` (seconds) cannot fit the next pause. After
    the last try a network error raises GatewayUnavailable and a 5xx ServerError; a 4xx
    is never retried."""
    attempt = 0
    while True:
        attempt += 1
        answer = yield call
        if not _retryable(answer) or attempt >= policy.attempts:
            break
        pause = policy.delay(attempt, _retry_after(answer))
        if budget_left is not None and budget_left() <= pause:
            break
        yield Pause(pause)
    return parse(answer)


# --- one plan per REST call -----------------------------------------------------------


def start_call(
    provider: str,
    kind: str,
    input: Mapping[str, JsonValue],
    idempotency_key: str,
    deadlines: Deadlines | None = None,
    callback_url: str | None = None,
    labels: Mapping[str, str] | None = None,
    validation: Validation | None = None,
) -> Call:
    """`POST /v1/operations` with its required `Idempotency-Key`; the options go beside
    `input`, never inside it (the gateway refuses an option's name there)."""
    if not isinstance(idempotency_key, str) or not idempotency_key.strip():
        raise UsageError(
            "idempotency_key is required: choose one per piece of work (e.g. the task id) "
            "and reuse it when retrying, so the work is never started twice"
        )
    if not isinstance(input, Mapping):
        raise UsageError("input must be a JSON object (a mapping)")
    body: dict[str, Any] = {"provider": provider, "kind": kind, "input": dict(input)}
    if deadlines:
        body["deadlines"] = dict(deadlines)
    if callback_url:
        body["callback_url"] = callback_url
    if labels:
        body["labels"] = dict(labels)
    if validation:
        body["validation"] = dict(validation)
    return Call("POST", "/v1/operations", json=body, headers={"Idempotency-Key": idempotency_key})


def wait_call(op_id: str, timeout: float) -> Call:
    """`GET .../wait?timeout=`: the gateway holds the request up to `timeout` seconds."""
    if timeout < 0:
        raise UsageError("timeout must be >= 0 seconds")
    return Call(
        "GET",
        op_path(op_id, "/wait"),
        params={"timeout": f"{timeout:g}"},
        read_timeout=timeout + WAIT_MARGIN_S,
    )


def operation(call: Call, *, waited: bool = False) -> Plan[Operation]:
    """A call whose answer is an operation body, with `outcome` filled (contract v2)."""
    body = yield from send(call)
    return with_outcome(cast(Operation, body), waited=waited)


def cancel_call(op_id: str, reason: str) -> Call:
    return Call("POST", op_path(op_id, "/cancel"), json={"reason": reason})


def result_plan(op_id: str, policy: RetryPolicy = NO_RETRY) -> Plan[ResultBody]:
    call = Call("GET", op_path(op_id, "/result"))
    return cast(ResultBody, (yield from send(call, policy)))


def errors_plan(
    op_id: str, limit: int = 50, cursor: str | None = None, policy: RetryPolicy = NO_RETRY
) -> Plan[ErrorsPage]:
    params = {"limit": str(limit)}
    if cursor:
        params["cursor"] = cursor
    call = Call("GET", op_path(op_id, "/errors"), params)
    return cast(ErrorsPage, (yield from send(call, policy)))


def list_plan(filters: Mapping[str, object]) -> Plan[OperationList]:
    """`GET /v1/operations` with the filters that are set (booleans as true/false)."""
    params = {
        k: (str(v).lower() if isinstance(v, bool) else str(v))
        for k, v in filters.items()
        if v is not None
    }
    page = cast(OperationList, (yield from send(Call("GET", "/v1/operations", params))))
    page["items"] = [with_outcome(op) for op in page["items"]]
    return page


def attention_plan(limit: int = 50) -> Plan[AttentionList]:
    call = Call("GET", "/v1/attention", {"limit": str(limit)})
    return cast(AttentionList, (yield from send(call)))


def history_plan(op_id: str) -> Plan[HistoryList]:
    """`GET .../history`: every transition and exchange, oldest first."""
    return cast(HistoryList, (yield from send(Call("GET", op_path(op_id, "/history")))))


def resolve_call(
    op_id: str,
    decision: Decision,
    reason: str,
    remote_job_id: str | None = None,
    result_deadline_seconds: float | None = None,
    force: bool = False,
) -> Call:
    """`POST .../resolve`: an operator's recorded decision (operator or admin key)."""
    body: dict[str, Any] = {"decision": decision, "reason": reason}
    if force:
        body["force"] = True
    if remote_job_id is not None:
        body["remote_job_id"] = remote_job_id
    if result_deadline_seconds is not None:
        body["result_deadline_seconds"] = result_deadline_seconds
    return Call("POST", op_path(op_id, "/resolve"), json=body)


def approval_call(op_id: str, approve: bool, reason: str) -> Call:
    """`POST .../approve` or `.../deny`: an operator's decision on a create held for
    approval (operator or admin key, never the one that created it)."""
    verb = "/approve" if approve else "/deny"
    return Call("POST", op_path(op_id, verb), json={"reason": reason})


# --- start_and_wait ---------------------------------------------------------------------


def start_and_wait(
    start: Call,
    *,
    max_wait: float,
    policy: RetryPolicy,
    monotonic: Callable[[], float],
) -> Plan[Outcome]:
    """Start (retried with the same key), then hold /wait calls until done or `max_wait`.

    Raises only for misuse, auth and bad input (ApiError 4xx), or GatewayUnavailable
    when the start never got an answer; once the operation exists, every remote
    trouble ends in an outcome (StillRunning when the gateway stops answering)."""
    if not max_wait >= 0:
        raise UsageError("max_wait must be >= 0 seconds")
    ends = monotonic() + max_wait

    def left() -> float:
        return ends - monotonic()

    key = (start.headers or {}).get("Idempotency-Key")
    try:
        op = with_outcome(cast(Operation, (yield from send(start, policy))))
    except (GatewayUnavailable, ServerError) as exc:
        raise GatewayUnavailable(
            f"{exc} (after {policy.attempts} tries; calling again with the same "
            "idempotency key is safe)",
            status=getattr(exc, "status", None),
            idempotency_key=key,
        ) from exc
    oid = op["operation_id"]
    while not op["done"]:
        remaining = left()
        if remaining <= 0:
            return still_running(op, "max_wait")
        call = wait_call(oid, min(remaining, WAIT_CALL_CAP_S))
        try:
            body = yield from send(call, policy, budget_left=left)
        except (GatewayUnavailable, ServerError):
            return still_running(op, "gateway_unreachable")
        op = with_outcome(cast(Operation, body), waited=True)
    return (yield from finish(op, policy))


def finish(op: Operation, policy: RetryPolicy) -> Plan[Outcome]:
    """The typed outcome of a done body, fetching a large result or the first page of
    failed items when the body only links them. A fetch that fails leaves them empty:
    the outcome itself is already certain."""
    result = op.get("result")
    items: list[FailedItem] = []
    more = False
    outcome = op.get("outcome")
    oid = op["operation_id"]
    try:
        if outcome in ("succeeded", "completed_with_errors") and result is None:
            if op.get("result_url"):
                result = (yield from result_plan(oid, policy)).get("result")
        if outcome == "completed_with_errors":
            page = yield from errors_plan(oid, FAILED_ITEMS_PAGE, None, policy)
            items = list(page.get("items") or [])
            more = page.get("next_cursor") is not None
    except (ApiError, GatewayUnavailable):
        pass
    return done_outcome(op, result=result, failed_items=items, more_failed_items=more)
