"""The bundled mock provider: an asynchronous job API that misbehaves on request.

The HTTP contract is docs/mock-provider.md. Behaviour lives in `scenarios` (pure),
state in `store` (SQLite), outbound webhooks in `webhooks`; this module only maps
HTTP onto them. `run()` is what `jobgate mock-provider` starts.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import uvicorn
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from jobgate_fakes.mock import scenarios as sc
from jobgate_fakes.mock.settings import MockSettings
from jobgate_fakes.mock.store import JobRecord, JobUpdate, MockStore, NewJob
from jobgate_fakes.mock.webhooks import WebhookSender

KIND = "report"
DEFAULT_PAGE = 5  # listing page size when the caller gives no `limit`: small on purpose


class ApiError(Exception):
    """An error answer in the contract's `{"error": {"code", "message"}}` shape."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers, self.extra = headers, extra


def _error(
    status: int, code: str, message: str, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    body = {"error": {"code": code, "message": message}, **extra}
    return JSONResponse(body, status_code=status, headers=headers)


class ConnectionDropped(Exception):
    """Raised on purpose mid-response so the server aborts the connection."""


class DroppedResponse(JSONResponse):
    """Announces the whole body in Content-Length, sends half of it, then fails.

    uvicorn answers an exception after the response started by closing the
    transport, so the client sees a truncated body (httpx2: RemoteProtocolError),
    exactly like a provider whose answer was lost on the way back.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = self.body
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        await send(
            {"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True}
        )
        raise ConnectionDropped("lost_create_response: connection dropped on purpose")


class _HideDeliberateDrops(logging.Filter):
    """Keeps uvicorn from logging a traceback for every deliberate drop."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, ConnectionDropped)


def _install_log_filter() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _HideDeliberateDrops) for f in logger.filters):
        logger.addFilter(_HideDeliberateDrops())


def _status_body(job: JobRecord, decision: sc.StatusDecision | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "job_id": job.job_id,
        "state": job.state,
        "progress": {"completed": job.completed, "total": job.total},
        "poll_after_seconds": decision.poll_after if decision else None,
        "updated_at": job.updated_at,
    }
    scenario = sc.Scenario.from_json(job.scenario)
    body["error"] = sc.error_for(job.state, scenario)
    if sc.keeps_partial_output(scenario, job.state):  # the part done, shown with the failure
        body["result"] = sc.build_result(scenario, job.job_id, job.kind)
    return body


def _status_answer(job: JobRecord, decision: sc.StatusDecision) -> Response:
    """The status answer, with the scenario's unreadable values when it asks for them:
    `total_exp` reports `progress.total` as 10**total_exp, `status_depth` adds a member
    nested that many arrays deep (written as text: no JSON encoder goes that deep)."""
    body = _status_body(job, decision)
    scenario = sc.Scenario.from_json(job.scenario)
    if scenario.p("total_exp"):
        body["progress"]["total"] = 10 ** int(scenario.p("total_exp"))
    depth = int(scenario.p("status_depth"))
    if not depth:
        return JSONResponse(body)
    text = json.dumps(body)[:-1] + ', "detail": ' + "[" * depth + "]" * depth + "}"
    return Response(text, media_type="application/json")


def _create_body(job: JobRecord, created: bool, with_result: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "job_id": job.job_id,
        "state": job.state,
        "status_url": f"/v1/jobs/{job.job_id}",
        "created": created,
    }
    if with_result:
        result = sc.build_result(sc.Scenario.from_json(job.scenario), job.job_id, job.kind)
        body["result"] = {k: result[k] for k in ("data", "sha256", "items")}
    return body


def _page_start(store: MockStore, cursor: str | None, after: str | None) -> int | None:
    """Where a listing page starts: a `cursor` from the last page, or `after` a job id."""
    if cursor is not None:
        if not (cursor.startswith("s") and cursor[1:].isdigit()):
            raise ApiError(400, "invalid_cursor", "cursor is not one this listing gave")
        return int(cursor[1:])
    if after is not None:
        seq = store.seq_of(after)
        if seq is None:
            raise ApiError(400, "invalid_after", f"no job {after}")
        return seq
    return None


async def _json_object(request: Request, *, required: bool) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        if required:
            raise ApiError(400, "invalid_body", "a JSON object body is required")
        return {}
    try:
        body = await request.json()
    except ValueError as exc:
        raise ApiError(400, "invalid_json", f"body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ApiError(400, "invalid_body", "body must be a JSON object")
    return body


def create_app(settings: MockSettings | None = None) -> FastAPI:
    """Build the mock provider app (settings from the environment when not given)."""
    settings = settings or MockSettings()
    store = MockStore(settings.state_path)
    sender = WebhookSender(settings.webhook_url, settings.webhook_secret, store.count_webhook_sent)
    _install_log_filter()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await sender.aclose()
        store.close()

    app = FastAPI(title="jobgate mock provider", lifespan=lifespan)
    app.state.store, app.state.sender, app.state.settings = store, sender, settings

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.code, exc.message, exc.headers, **exc.extra)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = "not_found" if exc.status_code == 404 else f"http_{exc.status_code}"
        return _error(exc.status_code, code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, "invalid_request", str(exc.errors()))

    def require_token(request: Request) -> None:
        if settings.provider_token is None:
            return
        given = request.headers.get("authorization", "")
        expected = f"Bearer {settings.provider_token}"
        if not hmac.compare_digest(given.encode(), expected.encode()):
            raise ApiError(
                401, "unauthorized", "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"}
            )

    v1 = APIRouter(prefix="/v1", dependencies=[Depends(require_token)])

    def meta(request: Request) -> tuple[str | None, str | None]:
        return request.headers.get("x-jobgate-worker"), request.headers.get("x-trace-id")

    @v1.post("/jobs")
    async def create_job(request: Request) -> Response:
        token = request.headers.get("idempotency-key") or None
        body = await _json_object(request, required=True)
        if body.get("kind") != KIND:
            raise ApiError(400, "unknown_kind", f"unknown kind {body.get('kind')!r}")
        job_input = body.get("input", {})
        metadata = body.get("metadata")
        if not isinstance(job_input, dict) or not isinstance(metadata, dict | None):
            raise ApiError(400, "invalid_body", "input and metadata must be objects")
        client_reference = body.get("client_reference")
        if client_reference is None and metadata is not None:
            client_reference = metadata.get("client_reference")
        if not isinstance(client_reference, str | None):
            raise ApiError(400, "invalid_body", "client_reference must be a string")
        try:
            scenario = sc.parse_scenario(job_input)
        except sc.ScenarioError as exc:
            raise ApiError(400, exc.code, exc.message) from exc
        worker, trace_id = meta(request)
        if store.refuse_create(client_reference, int(scenario.p("overloaded"))):
            said = "the provider is overloaded; nothing was created; try again later"
            headers = {"Retry-After": "1", **({"X-Trace-Id": trace_id} if trace_id else {})}
            return _error(503, "overloaded", said, headers)
        new_job = NewJob(
            KIND,
            scenario.to_json(),
            client_reference,
            trace_id,
            sc.initial_state(scenario),
            sc.initial_progress(scenario),
            metadata,
            int(scenario.p("list_delay")),
            body,
        )
        # Without a token, or told to ignore it, the mock acts like a provider without
        # create idempotency: every create makes a new job.
        idempotent = token is not None and not scenario.p("ignore_token")
        decision, job = store.create_call(
            token,
            lambda n: sc.decide_create(scenario, n, idempotent=idempotent),
            new_job,
            worker,
            trace_id,
            idempotent=idempotent,
        )
        if decision.action == "new" and scenario.p("create_delay_ms"):
            await asyncio.sleep(scenario.p("create_delay_ms") / 1000)  # the caller times out
        echo = {"X-Trace-Id": trace_id} if trace_id else None
        if decision.response == "unavailable":
            return _error(503, "unavailable", "provider temporarily unavailable", echo)
        if decision.response == "reject":
            return _error(422, "invalid_input", "the provider rejected this input", echo)
        assert job is not None
        created = decision.action == "new"
        content = _create_body(job, created, with_result=decision.response == "sync")
        if decision.response == "drop":
            return DroppedResponse(content, status_code=202, headers=echo)
        status = 202 if created and decision.response == "accepted" else 200
        return JSONResponse(content, status_code=status, headers=echo)

    @v1.get("/jobs")
    async def lookup(
        idempotency_key: str | None = None,
        client_reference: str | None = None,
        limit: int = DEFAULT_PAGE,
        cursor: str | None = None,
        after: str | None = None,
    ) -> dict[str, Any]:
        if idempotency_key is not None or client_reference is not None:
            return {"jobs": store.lookup(idempotency_key, client_reference)}
        page = store.page(limit=limit, before_seq=_page_start(store, cursor, after))
        nxt = page.next_cursor
        return {
            "jobs": page.jobs,
            "next_cursor": nxt,
            "has_more": nxt is not None,
            "last_id": page.last_id,
            "next": f"/v1/jobs?limit={limit}&cursor={nxt}" if nxt else None,
        }

    @v1.get("/jobs/{job_id}")
    async def job_status(job_id: str, request: Request) -> Response:
        def decide(job: JobRecord) -> tuple[sc.StatusDecision, JobUpdate | None]:
            scenario = sc.Scenario.from_json(job.scenario)
            elapsed = datetime.now(UTC) - datetime.fromisoformat(job.created_at)
            timed = sc.decide_running_for(scenario, job.state, elapsed.total_seconds() * 1000)
            if timed is not None:  # `run_ms`: still within its wall-clock run
                return timed, JobUpdate(timed.state, timed.progress)
            d = sc.decide_status(scenario, job.state, job.status_calls, job.progress)
            return d, None if d.retry_after is not None else JobUpdate(d.state, d.progress)

        found = store.job_call(job_id, "status", decide, *meta(request))
        if found is None:
            raise ApiError(404, "job_not_found", f"no job {job_id}")
        before, decision, after = found
        scenario = sc.Scenario.from_json(before.scenario)
        delay_ms = scenario.params.get("status_delay_ms") or 0
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        sender.enqueue(job_id, sc.plan_webhooks(scenario, before.state, decision))
        if decision.retry_after is not None:
            return _error(
                429, "rate_limited", "too many requests", {"Retry-After": str(decision.retry_after)}
            )
        return _status_answer(after, decision)

    @v1.post("/jobs/{job_id}/cancel")
    async def cancel_job(job_id: str, request: Request) -> Response:
        await _json_object(request, required=False)  # `reason` is accepted and ignored

        def decide(job: JobRecord) -> tuple[sc.CancelDecision, JobUpdate]:
            scenario = sc.Scenario.from_json(job.scenario)
            d = sc.decide_cancel(scenario, job.state, job.progress)
            return d, JobUpdate(d.new_state, d.progress)

        found = store.job_call(job_id, "cancel", decide, *meta(request))
        if found is None:
            raise ApiError(404, "job_not_found", f"no job {job_id}")
        _, decision, _ = found
        if decision.http_status == 409:
            return _error(
                409,
                "job_finished",
                f"job is already {decision.answer_state}",
                state=decision.answer_state,
            )
        return JSONResponse({"job_id": job_id, "state": decision.answer_state}, status_code=202)

    @v1.get("/jobs/{job_id}/result")
    async def job_result(job_id: str, request: Request) -> Response:
        def decide(job: JobRecord) -> tuple[sc.ResultAnswer, None]:
            scenario = sc.Scenario.from_json(job.scenario)
            return sc.decide_result(scenario, job.state, job.result_calls), None

        found = store.job_call(job_id, "result", decide, *meta(request))
        if found is None:
            raise ApiError(404, "job_not_found", f"no job {job_id}")
        job, answer, _ = found
        if answer == "not_finished":
            return _error(409, "not_finished", f"job is {job.state}", state=job.state)
        if answer == "unavailable":
            return _error(503, "result_unavailable", "result temporarily unavailable")
        scenario = sc.Scenario.from_json(job.scenario)
        return JSONResponse(sc.build_result(scenario, job.job_id, job.kind))

    app.include_router(v1)

    @app.get("/_mock/stats")
    async def stats(
        token: str | None = None, client_reference: str | None = None
    ) -> dict[str, Any]:
        return store.stats(token, client_reference)

    @app.get("/_mock/create_body")
    async def create_body(job_id: str) -> dict[str, Any]:
        """What the create that made the job carried, so a test can see what was sent."""
        return {"job_id": job_id, "create_body": store.create_body(job_id)}

    @app.get("/_mock/calls")
    async def calls(job_id: str) -> list[dict[str, Any]]:
        return store.calls(job_id)

    @app.post("/_mock/reset")
    async def reset() -> dict[str, Any]:
        store.reset()
        return {"reset": True}

    return app


def run(host: str = "127.0.0.1", port: int = 8081, *, access_log: bool = True) -> None:
    """Serve the mock provider with uvicorn until interrupted (`jobgate mock-provider`)."""
    uvicorn.run(create_app(), host=host, port=port, log_config=None, access_log=access_log)
