"""The fal.ai queue fake over HTTP: submit, status, result and cancel of queued requests.

Auth is `Authorization: Key <key>` (the fake's `api_key`); errors are `{"detail": ...}`.
The URLs a submit answers are on the fake's own origin (the request's base URL), under
`<owner>/<alias>` of the app: a sub-path (`fal-ai/flux/dev`) is not in them.
"""

from __future__ import annotations

import hmac
import json

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from jobgate_fakes.providers.base import Fake, FakeError, Jobs, fake_app
from jobgate_fakes.providers.fal_queue import model as m
from jobgate_fakes.providers.faults import Fault
from jobgate_fakes.providers.settings import FakeSettings

OPS = ("submit", "status", "result", "cancel")
MISSING_PREFIX = "missing"


class TextError(FakeError):
    """An error answered as plain text (fal's throttling answer), not JSON."""

    def response(self) -> Response:
        return PlainTextResponse(self.body["text"], status_code=self.status, headers=self.headers)


class FalErrors:
    """`{"detail": ...}` bodies, as fal_client's `_raise_for_status` reads them."""

    def error(self, status: int, message: str) -> FakeError:
        return FakeError(status, {"detail": message})

    def throttled(self, fault: Fault) -> FakeError:
        headers = {"retry-after": str(fault.retry_after)} if fault.retry_after > 0 else {}
        return TextError(fault.answer_status(), {"text": "Too Many Requests"}, headers)


class FalFake:
    """The fake's state: requests by id, oldest first."""

    def __init__(self, settings: FakeSettings) -> None:
        self.errors = FalErrors()
        self.fake = Fake(settings, OPS, self.errors)
        self.requests: Jobs[m.Request] = Jobs(self._missing, m.Request.tick)

    def _missing(self, request_id: str) -> FakeError:
        return self.errors.error(404, f"Request {request_id} not found")

    def get(self, owner: str, alias: str, request_id: str) -> m.Request:
        found = self.requests.get(request_id)
        if found.app != f"{owner}/{alias}":
            raise self._missing(request_id)
        return found


def create_app(settings: FakeSettings | None = None) -> FastAPI:
    """Build the fal queue fake (settings from `JOBGATE_FAKE_*` when not given)."""
    state = FalFake(settings or FakeSettings())
    fake, errors = state.fake, state.errors
    app = fake_app(
        "fal.ai queue fake", fake, advance=state.requests.advance, reset=state.requests.clear
    )

    def authorize(request: Request) -> str:
        """The key check; returns the base URL the answer's links are made on."""
        scheme, _, key = request.headers.get("authorization", "").partition(" ")
        if scheme != "Key" or not key:
            raise errors.error(401, "No credentials found. Send 'Authorization: Key <FAL_KEY>'.")
        if not hmac.compare_digest(key.encode(), fake.settings.api_key.encode()):
            raise errors.error(401, "Invalid credentials.")
        return str(request.base_url).rstrip("/")

    async def submit(owner: str, alias: str, request: Request) -> Response:
        base = authorize(request)
        fake.stats.create_call([])
        if owner.startswith(MISSING_PREFIX) or alias.startswith(MISSING_PREFIX):
            raise errors.error(404, f"Application '{owner}/{alias}' not found")
        try:
            arguments = json.loads(await request.body() or b"{}")
        except ValueError as exc:
            raise errors.error(400, f"Invalid JSON body: {exc}") from exc
        if not isinstance(arguments, dict):
            raise errors.error(400, "The request body must be a JSON object")

        def effect() -> Response:
            queued = m.Request(f"{owner}/{alias}", arguments)
            state.requests.add(queued.id, queued)
            fake.stats.job_created(queued.id, [])
            body = {"request_id": queued.id, **queued.urls(base), "queue_position": 0}
            return JSONResponse(body)

        return await fake.guarded("submit", effect)

    @app.get("/{owner}/{alias}/requests/{request_id}/status")
    async def status(owner: str, alias: str, request_id: str, request: Request) -> Response:
        base = authorize(request)
        queued = state.get(owner, alias, request_id)
        logs = request.query_params.get("logs", "0").lower() in ("1", "true")

        def effect() -> Response:
            queued.tick()
            return JSONResponse(queued.status_json(base, logs))

        return await fake.job_call(queued.id, "status", effect)

    @app.get("/{owner}/{alias}/requests/{request_id}")
    async def result(owner: str, alias: str, request_id: str, request: Request) -> Response:
        authorize(request)
        queued = state.get(owner, alias, request_id)

        def effect() -> Response:
            if queued.status != "COMPLETED":
                return errors.error(400, "Request is still in progress").response()
            if queued.cancelled:
                return errors.error(400, m.CANCELLED).response()
            problem = queued.problem
            if problem is not None:  # found when the app ran: FieldException's answer
                return JSONResponse({"detail": [problem]}, status_code=422)
            if queued.error is not None:
                return errors.error(500, queued.error[0]).response()
            return JSONResponse(queued.output())

        return await fake.job_call(queued.id, "result", effect)

    @app.put("/{owner}/{alias}/requests/{request_id}/cancel")
    async def cancel(owner: str, alias: str, request_id: str, request: Request) -> Response:
        authorize(request)
        queued = state.get(owner, alias, request_id)

        def effect() -> Response:
            if not queued.cancel():
                return JSONResponse({"status": "ALREADY_COMPLETED"}, status_code=400)
            return JSONResponse({"status": "CANCELLATION_REQUESTED"}, status_code=202)

        return await fake.job_call(queued.id, "cancel", effect)

    @app.post("/{owner}/{alias}")
    async def submit_app(owner: str, alias: str, request: Request) -> Response:
        return await submit(owner, alias, request)

    @app.post("/{owner}/{alias}/{path:path}")
    async def submit_path(owner: str, alias: str, path: str, request: Request) -> Response:
        return await submit(owner, alias, request)

    @app.api_route("/{rest:path}", methods=["GET", "PUT", "DELETE", "PATCH"])
    async def not_found(rest: str) -> Response:
        # Any path is some app's submit path (POST only): other methods there are 404s.
        return errors.error(404, "Not Found").response()

    return app
