"""`Client` (sync) and `AsyncClient`: the jobgate REST API over httpx2, nothing else.

Both drive the same plans (`_plans.py`); they differ only in how a request is sent
and how a pause is slept. Every request has an explicit timeout; a `/wait` call's
read timeout is its own timeout plus a margin, because the gateway holds it open.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any, TypeVar, Unpack

import httpx2

from jobgate_client import _plans
from jobgate_client._plans import Answer, Call, Pause, Plan, RetryPolicy, op_path
from jobgate_client.errors import UsageError
from jobgate_client.outcomes import Outcome
from jobgate_client.types import (
    AttentionList,
    Decision,
    ErrorsPage,
    FailedItem,
    HistoryList,
    JsonValue,
    ListFilters,
    Operation,
    OperationList,
    ResultBody,
    StartOptions,
)

T = TypeVar("T")
DEFAULT_TIMEOUT = httpx2.Timeout(30.0, connect=10.0)
USER_AGENT = "jobgate-client/0.1"


class _Base:
    """What both clients share: headers, timeouts and the request of a `Call`."""

    def __init__(
        self, api_key: str | None, timeout: float | httpx2.Timeout, retry: RetryPolicy | None
    ) -> None:
        self._headers = {"User-Agent": USER_AGENT}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._timeout = timeout if isinstance(timeout, httpx2.Timeout) else httpx2.Timeout(timeout)
        self.retry = retry or RetryPolicy()

    def _request_args(self, call: Call) -> dict[str, Any]:
        timeout = self._timeout
        if call.read_timeout is not None:
            read = max(call.read_timeout, timeout.read or 0.0)
            timeout = httpx2.Timeout(
                connect=timeout.connect, read=read, write=timeout.write, pool=timeout.pool
            )
        return {
            "method": call.method,
            "url": call.path,
            "params": call.params,
            "json": call.json,
            "headers": {**self._headers, **(call.headers or {})},
            "timeout": timeout,
        }


def _need_url(base_url: str | None, http: object | None) -> str:
    if http is None and not base_url:
        raise UsageError("base_url is required (e.g. 'http://127.0.0.1:8080')")
    return base_url or ""


class Client(_Base):
    """The sync client. `with Client(url, key) as jg: jg.start_and_wait(...)`.

    Pass `http=` to reuse an `httpx2.Client` you own (its base URL is used, and it is
    not closed here), or `transport=` for tests."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx2.Timeout = DEFAULT_TIMEOUT,
        http: httpx2.Client | None = None,
        transport: httpx2.BaseTransport | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(api_key, timeout, retry)
        url = _need_url(base_url, http)
        self._owned = http is None
        self._http = http or httpx2.Client(base_url=url, transport=transport)
        self._sleep = sleep
        self._monotonic = monotonic

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owned:
            self._http.close()

    def _send(self, call: Call) -> Answer:
        try:
            return self._http.request(**self._request_args(call))
        except httpx2.TransportError as exc:
            return exc

    def _run(self, plan: Plan[T]) -> T:
        step = next(plan)
        while True:
            answer: Answer = None
            if isinstance(step, Pause):
                self._sleep(step.seconds)
            else:
                answer = self._send(step)
            try:
                step = plan.send(answer)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]

    def start(
        self,
        provider: str,
        kind: str,
        input: Mapping[str, JsonValue],
        *,
        idempotency_key: str,
        **options: Unpack[StartOptions],
    ) -> Operation:
        """Start an operation (one try: retry it yourself with the SAME key)."""
        call = _plans.start_call(provider, kind, input, idempotency_key, **options)
        return self._run(_plans.operation(call))

    def get(self, operation_id: str) -> Operation:
        """The operation as it is now."""
        return self._run(_plans.operation(Call("GET", op_path(operation_id))))

    def wait(self, operation_id: str, timeout: float = 60.0) -> Operation:
        """Hold until done or `timeout` seconds; `outcome` is `timed_out` if not done."""
        return self._run(_plans.operation(_plans.wait_call(operation_id, timeout), waited=True))

    def cancel(self, operation_id: str, reason: str = "") -> Operation:
        """Record the intent to cancel; NOT cancelled until the body says so."""
        return self._run(_plans.operation(_plans.cancel_call(operation_id, reason)))

    def result(self, operation_id: str) -> ResultBody:
        """The checked result; ConflictError (`result_not_available`) until there is one."""
        return self._run(_plans.result_plan(operation_id))

    def errors(self, operation_id: str, limit: int = 50, cursor: str | None = None) -> ErrorsPage:
        """One page of failed items; pass `next_cursor` back for the next."""
        return self._run(_plans.errors_plan(operation_id, limit, cursor))

    def iter_errors(self, operation_id: str, page_size: int = 200) -> Iterator[FailedItem]:
        """Every failed item, a page at a time."""
        cursor: str | None = None
        while True:
            page = self.errors(operation_id, page_size, cursor)
            yield from page["items"]
            cursor = page["next_cursor"]
            if cursor is None:
                return

    def request(
        self, method: str, path: str, *, params: dict[str, str] | None = None, json: Any = None
    ) -> Any:
        """Any other REST call (history, resolve, ...): its JSON, or the typed error."""
        return self._run(_plans.send(Call(method, path, params, json)))

    def attention(self, limit: int = 50) -> AttentionList:
        """Operations that need a human (operator keys see all)."""
        return self._run(_plans.attention_plan(limit))

    def history(self, operation_id: str) -> HistoryList:
        """Every transition, exchange and decision on the operation, oldest first."""
        return self._run(_plans.history_plan(operation_id))

    def resolve(
        self,
        operation_id: str,
        decision: Decision,
        reason: str,
        *,
        remote_job_id: str | None = None,
        result_deadline_seconds: float | None = None,
        force: bool = False,
    ) -> Operation:
        """An operator's recorded decision on an operation that needs attention; ``force``
        takes an `accept_job` job the provider shows nothing to prove (recorded as such)."""
        call = _plans.resolve_call(
            operation_id, decision, reason, remote_job_id, result_deadline_seconds, force
        )
        return self._run(_plans.operation(call))

    def approve(self, operation_id: str, reason: str) -> Operation:
        """Approve a create the gateway's policy held: it is sent like any create."""
        return self._run(_plans.operation(_plans.approval_call(operation_id, True, reason)))

    def deny(self, operation_id: str, reason: str) -> Operation:
        """Deny a create the gateway's policy held: it ends failed, never sent."""
        return self._run(_plans.operation(_plans.approval_call(operation_id, False, reason)))

    def start_and_wait(
        self,
        provider: str,
        kind: str,
        input: Mapping[str, JsonValue],
        idempotency_key: str,
        max_wait: float = 300.0,
        **options: Unpack[StartOptions],
    ) -> Outcome:
        """Start, then wait up to `max_wait` seconds: exactly one typed outcome. Network
        errors, 429 and 5xx are retried with the same key (`retry`); see `_plans`."""
        call = _plans.start_call(provider, kind, input, idempotency_key, **options)
        return self._run(
            _plans.start_and_wait(
                call, max_wait=max_wait, policy=self.retry, monotonic=self._monotonic
            )
        )

    def list(self, **filters: Unpack[ListFilters]) -> OperationList:
        """One page, newest first (filters: see `ListFilters`)."""
        return self._run(_plans.list_plan(filters))


class AsyncClient(_Base):
    """The async client: the same calls as `Client`, awaited."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx2.Timeout = DEFAULT_TIMEOUT,
        http: httpx2.AsyncClient | None = None,
        transport: httpx2.AsyncBaseTransport | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(api_key, timeout, retry)
        url = _need_url(base_url, http)
        self._owned = http is None
        self._http = http or httpx2.AsyncClient(base_url=url, transport=transport)
        self._sleep = sleep
        self._monotonic = monotonic

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owned:
            await self._http.aclose()

    async def _send(self, call: Call) -> Answer:
        try:
            return await self._http.request(**self._request_args(call))
        except httpx2.TransportError as exc:
            return exc

    async def _run(self, plan: Plan[T]) -> T:
        step = next(plan)
        while True:
            answer: Answer = None
            if isinstance(step, Pause):
                await self._sleep(step.seconds)
            else:
                answer = await self._send(step)
            try:
                step = plan.send(answer)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]

    async def start(
        self,
        provider: str,
        kind: str,
        input: Mapping[str, JsonValue],
        *,
        idempotency_key: str,
        **options: Unpack[StartOptions],
    ) -> Operation:
        """Start an operation (one try: retry it yourself with the SAME key)."""
        call = _plans.start_call(provider, kind, input, idempotency_key, **options)
        return await self._run(_plans.operation(call))

    async def get(self, operation_id: str) -> Operation:
        """The operation as it is now."""
        return await self._run(_plans.operation(Call("GET", op_path(operation_id))))

    async def wait(self, operation_id: str, timeout: float = 60.0) -> Operation:
        """Hold until done or `timeout` seconds; `outcome` is `timed_out` if not done."""
        plan = _plans.operation(_plans.wait_call(operation_id, timeout), waited=True)
        return await self._run(plan)

    async def cancel(self, operation_id: str, reason: str = "") -> Operation:
        """Record the intent to cancel; NOT cancelled until the body says so."""
        return await self._run(_plans.operation(_plans.cancel_call(operation_id, reason)))

    async def result(self, operation_id: str) -> ResultBody:
        """The checked result; ConflictError (`result_not_available`) until there is one."""
        return await self._run(_plans.result_plan(operation_id))

    async def errors(
        self, operation_id: str, limit: int = 50, cursor: str | None = None
    ) -> ErrorsPage:
        """One page of failed items; pass `next_cursor` back for the next."""
        return await self._run(_plans.errors_plan(operation_id, limit, cursor))

    async def iter_errors(
        self, operation_id: str, page_size: int = 200
    ) -> AsyncIterator[FailedItem]:
        """Every failed item, a page at a time."""
        cursor: str | None = None
        while True:
            page = await self.errors(operation_id, page_size, cursor)
            for item in page["items"]:
                yield item
            cursor = page["next_cursor"]
            if cursor is None:
                return

    async def request(
        self, method: str, path: str, *, params: dict[str, str] | None = None, json: Any = None
    ) -> Any:
        """Any other REST call (history, resolve, ...): its JSON, or the typed error."""
        return await self._run(_plans.send(Call(method, path, params, json)))

    async def attention(self, limit: int = 50) -> AttentionList:
        """Operations that need a human (operator keys see all)."""
        return await self._run(_plans.attention_plan(limit))

    async def history(self, operation_id: str) -> HistoryList:
        """Every transition, exchange and decision on the operation, oldest first."""
        return await self._run(_plans.history_plan(operation_id))

    async def resolve(
        self,
        operation_id: str,
        decision: Decision,
        reason: str,
        *,
        remote_job_id: str | None = None,
        result_deadline_seconds: float | None = None,
        force: bool = False,
    ) -> Operation:
        """An operator's recorded decision on an operation that needs attention; ``force``
        takes an `accept_job` job the provider shows nothing to prove (recorded as such)."""
        call = _plans.resolve_call(
            operation_id, decision, reason, remote_job_id, result_deadline_seconds, force
        )
        return await self._run(_plans.operation(call))

    async def approve(self, operation_id: str, reason: str) -> Operation:
        """Approve a create the gateway's policy held: it is sent like any create."""
        call = _plans.approval_call(operation_id, True, reason)
        return await self._run(_plans.operation(call))

    async def deny(self, operation_id: str, reason: str) -> Operation:
        """Deny a create the gateway's policy held: it ends failed, never sent."""
        call = _plans.approval_call(operation_id, False, reason)
        return await self._run(_plans.operation(call))

    async def start_and_wait(
        self,
        provider: str,
        kind: str,
        input: Mapping[str, JsonValue],
        idempotency_key: str,
        max_wait: float = 300.0,
        **options: Unpack[StartOptions],
    ) -> Outcome:
        """Start, then wait up to `max_wait` seconds: exactly one typed outcome."""
        call = _plans.start_call(provider, kind, input, idempotency_key, **options)
        return await self._run(
            _plans.start_and_wait(
                call, max_wait=max_wait, policy=self.retry, monotonic=self._monotonic
            )
        )

    async def list(self, **filters: Unpack[ListFilters]) -> OperationList:
        """One page, newest first (filters: see `ListFilters`)."""
        return await self._run(_plans.list_plan(filters))
