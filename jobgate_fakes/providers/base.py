"""The frame every provider fake is built on: errors, faults, stats and the control API.

A fake supplies its provider's error bodies (`ErrorStyle`), a way to move its jobs on
(`advance`) and to forget them (`reset`); this module gives it the rest:

- `FakeError`, raised anywhere, answered as the provider's own JSON error body;
- `Fake.guarded(op, effect)`, which applies a queued fault around the work of one call;
- the control API outside the provider's paths, under `/_fake/`:
  `POST/GET/DELETE /_fake/faults`, `GET /_fake/stats?reference=`, `POST /_fake/reset`,
  `POST /_fake/advance` (`{"job_id": optional, "steps": n}`: time passes without a
  status read, e.g. before a webhook), `GET /_fake/webhooks`, `POST /_fake/webhooks/flush`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, Generic, Protocol, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from jobgate_fakes.mock.app import _install_log_filter
from jobgate_fakes.providers.faults import Fault, FaultQueue, after_effect
from jobgate_fakes.providers.settings import FakeSettings
from jobgate_fakes.providers.stats import Stats
from jobgate_fakes.providers.webhooks import WebhookOutbox, new_secret

T = TypeVar("T")
J = TypeVar("J")


class FakeError(Exception):
    """An error answer, already in the provider's body shape."""

    def __init__(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(json.dumps(body))
        self.status, self.body, self.headers = status, body, headers or {}

    def response(self) -> Response:
        """The answer as sent (JSON, unless a provider's answer is not)."""
        return JSONResponse(self.body, status_code=self.status, headers=self.headers)


class ErrorStyle(Protocol):
    """How one provider words its errors."""

    def error(self, status: int, message: str) -> FakeError:
        """Any error answer with this status (4xx and 5xx alike)."""
        ...

    def throttled(self, fault: Fault) -> FakeError:
        """The rate-limit answer (429 unless the fault says otherwise) with its retry hint."""
        ...


class Advance(BaseModel):
    """Body of `POST /_fake/advance`."""

    job_id: str | None = None
    steps: int = Field(default=1, ge=1, le=1000)


class Fake:
    """One fake's shared machinery: settings, fault queue, stats and webhook outbox."""

    def __init__(self, settings: FakeSettings, ops: Iterable[str], style: ErrorStyle) -> None:
        self.settings = settings
        self.faults = FaultQueue(ops)
        self.stats = Stats()
        self.style = style
        self.outbox = WebhookOutbox(settings.webhook_secret or new_secret())

    def render_fault(self, status: int, fault: Fault) -> Response:
        """The provider's answer for a fault that answers an error."""
        if status == 429:
            return self.style.throttled(fault).response()
        return self.style.error(status, _SERVER_MESSAGES.get(status, "server error")).response()

    async def job_call(
        self, job_id: str, op: str, effect: Callable[[], Response | Awaitable[Response]]
    ) -> Response:
        """Count one `op` call about `job_id`, then run it `guarded`."""
        self.stats.call(job_id, op)
        return await self.guarded(op, effect)

    async def guarded(
        self, op: str, effect: Callable[[], Response | Awaitable[Response]]
    ) -> Response:
        """Run the work of one `op` call under the next queued fault for `op`, if any."""
        fault = self.faults.take(op)
        if fault is not None and fault.refuses:
            return self.render_fault(fault.answer_status(), fault)
        result = effect()
        response = await result if inspect.isawaitable(result) else result
        return await after_effect(fault, response, self.render_fault)


class Jobs(Generic[J]):
    """A fake's jobs by id, oldest first: lookup with the provider's 404, and passing time."""

    def __init__(self, missing: Callable[[str], FakeError], step: Callable[[J], object]) -> None:
        self._jobs: dict[str, J] = {}
        self._missing, self._step = missing, step

    def get(self, job_id: str) -> J:
        """The job, or the provider's not-found error."""
        found = self._jobs.get(job_id)
        if found is None:
            raise self._missing(job_id)
        return found

    def add(self, job_id: str, job: J) -> J:
        self._jobs[job_id] = job
        return job

    def remove(self, job_id: str) -> None:
        del self._jobs[job_id]

    def all(self) -> list[J]:
        """Every job, oldest first."""
        return list(self._jobs.values())

    def newest_first(self) -> list[J]:
        return self.all()[::-1]

    def advance(self, job_id: str | None, steps: int) -> None:
        """Time passes for one job (or all): `steps` steps each, as status reads would do."""
        for job in [self.get(job_id)] if job_id else self.all():
            for _ in range(steps):
                self._step(job)

    def clear(self) -> None:
        self._jobs.clear()


_SERVER_MESSAGES = {
    500: "internal server error",
    502: "bad gateway",
    503: "service unavailable",
    504: "gateway timeout",
    529: "Overloaded",  # Anthropic's overloaded_error, as its Errors reference shows it
}


def fake_app(
    title: str,
    fake: Fake,
    *,
    advance: Callable[[str | None, int], None],
    reset: Callable[[], None],
) -> FastAPI:
    """A FastAPI app with the provider's error handling and the `/_fake/` control API."""
    _install_log_filter()  # deliberate connection drops log no traceback

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await fake.outbox.aclose()

    app = FastAPI(title=title, lifespan=lifespan, openapi_url=None)
    app.state.fake = fake

    @app.exception_handler(FakeError)
    async def _fake_error(_: Request, exc: FakeError) -> Response:
        return exc.response()

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> Response:
        return fake.style.error(exc.status_code, str(exc.detail)).response()

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> Response:
        return fake.style.error(400, _first_problem(exc.errors())).response()

    @app.post("/_fake/faults")
    async def add_faults(request: Request) -> JSONResponse:
        try:
            body = await request.json()
            items = body if isinstance(body, list) else body.get("faults", [body])
            fake.faults.add(Fault.model_validate(item) for item in items)
        except (ValidationError, ValueError, AttributeError, TypeError) as exc:
            return JSONResponse({"detail": str(exc)}, status_code=400)
        return JSONResponse({"pending": fake.faults.pending()})

    @app.get("/_fake/faults")
    async def list_faults() -> dict[str, Any]:
        return {"pending": fake.faults.pending()}

    @app.delete("/_fake/faults")
    async def clear_faults() -> dict[str, Any]:
        fake.faults.clear()
        return {"pending": []}

    @app.get("/_fake/stats")
    async def stats(reference: str | None = None) -> dict[str, Any]:
        return fake.stats.to_json(reference)

    @app.post("/_fake/advance")
    async def advance_jobs(body: Advance) -> dict[str, Any]:
        advance(body.job_id, body.steps)
        return {"advanced": body.steps}

    @app.post("/_fake/reset")
    async def reset_all() -> dict[str, Any]:
        fake.faults.clear()
        fake.stats.reset()
        fake.outbox.reset()
        reset()
        return {"reset": True}

    @app.get("/_fake/webhooks")
    async def webhooks() -> dict[str, Any]:
        return {"deliveries": fake.outbox.sent()}

    @app.post("/_fake/webhooks/flush")
    async def flush() -> dict[str, Any]:
        await fake.outbox.flush()
        return {"deliveries": fake.outbox.sent()}

    return app


def answer_headers(app: FastAPI, prefix: str, make: Callable[[], dict[str, str]]) -> None:
    """Add `make()`'s headers (unless already set) to every answer under `prefix`."""

    @app.middleware("http")
    async def add_headers(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        if request.url.path.startswith(prefix):
            for name, value in make().items():
                response.headers.setdefault(name, value)
        return response


def _first_problem(errors: Sequence[Any]) -> str:
    if not errors:
        return "invalid request"
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    return f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg"))


async def json_object(request: Request, style: ErrorStyle) -> dict[str, Any]:
    """The request body as a JSON object, or the provider's 400."""
    try:
        body = json.loads(await request.body() or b"null")
    except ValueError as exc:
        raise style.error(400, f"request body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise style.error(400, "request body must be a JSON object")
    return body


def now() -> datetime:
    """Wall time, used only for the timestamps an API reports (never for behaviour)."""
    return datetime.now(UTC)


def rfc3339(at: datetime) -> str:
    """`2024-09-24T18:37:24.100435Z`: RFC 3339 in UTC with a Z, as these APIs print it."""
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def id_list(
    items: Sequence[T],
    ident: Callable[[T], str],
    render: Callable[[T], dict[str, Any]],
    *,
    limit: int,
    after: str | None = None,
    before: str | None = None,
) -> dict[str, Any]:
    """An id-cursor list body: `data`, `has_more`, `first_id`, `last_id` (OpenAI, Anthropic)."""
    page, more = id_page(items, ident, limit=limit, after=after, before=before)
    return {
        "data": [render(item) for item in page],
        "has_more": more,
        "first_id": ident(page[0]) if page else None,
        "last_id": ident(page[-1]) if page else None,
    }


def id_page(
    items: Sequence[T],
    ident: Callable[[T], str],
    *,
    limit: int,
    after: str | None = None,
    before: str | None = None,
) -> tuple[list[T], bool]:
    """One page of `items` (already in list order) after or before the item with that id.

    Returns the page and whether more items lie beyond it in the direction of travel;
    an unknown cursor gives an empty page, as the cursor names no place in the list.
    """
    ids = [ident(item) for item in items]
    if before is not None:
        end = ids.index(before) if before in ids else 0
        start = max(0, end - limit)
        return list(items[start:end]), start > 0
    start = ids.index(after) + 1 if after in ids else (0 if after is None else len(ids))
    page = list(items[start : start + limit])
    return page, start + limit < len(items)
