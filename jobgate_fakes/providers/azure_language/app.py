"""The Azure AI Language analyze-text jobs fake over HTTP: submit, status monitor, cancel.

Auth is `Ocp-Apim-Subscription-Key: <key>` (or `Authorization: Bearer <token>` for
Entra ID); every call needs `?api-version=2023-04-01`. A submit answers 202 with an
empty body and an `Operation-Location` header naming the status monitor.
"""

from __future__ import annotations

import hmac
import uuid
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse, Response

from jobgate_fakes.providers.azure_language import model as m
from jobgate_fakes.providers.base import (
    Fake,
    FakeError,
    Jobs,
    answer_headers,
    fake_app,
    json_object,
)
from jobgate_fakes.providers.faults import Fault
from jobgate_fakes.providers.settings import FakeSettings

OPS = ("submit", "status", "cancel")
API_VERSIONS = frozenset({"2023-04-01"})
_CODES = {
    400: "InvalidRequest",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    500: "InternalServerError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
_ACCESS_DENIED = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide "
    "a valid key for an active subscription and use a correct regional API endpoint for your "
    "resource."
)
_OPERATION_NAMES = {
    "submit": "Analyze Text Submit Job",
    "status": "Analyze Text Job Status",
    "cancel": "Analyze Text Cancel Job",
}


class AzureErrors:
    """`{"error": {"code", "message", "innererror"?}}` (Azure REST API guidelines)."""

    def error(self, status: int, message: str, inner: dict[str, Any] | None = None) -> FakeError:
        if status == 401:  # answered by the API gateway, before the service
            return FakeError(401, {"error": {"code": "401", "message": _ACCESS_DENIED}})
        fields: dict[str, Any] = {
            "code": _CODES.get(status, "InternalServerError"),
            "message": message,
        }
        if inner is not None:
            fields["innererror"] = inner
        return FakeError(status, {"error": fields})

    def throttled(self, fault: Fault) -> FakeError:
        operation = _OPERATION_NAMES.get(fault.op, fault.op)
        message = (
            f"Requests to the {operation} Operation under Language API have exceeded call rate "
            f"limit of your current TextAnalytics S pricing tier. Please retry after "
            f"{fault.retry_after} seconds. Please contact Azure support service if you would "
            "like to further increase the default rate limit."
        )
        body = {"error": {"code": "429", "message": message}}
        return FakeError(fault.answer_status(), body, {"Retry-After": str(fault.retry_after)})


class LanguageFake:
    """The fake's state: jobs by id."""

    def __init__(self, settings: FakeSettings) -> None:
        self.errors = AzureErrors()
        self.fake = Fake(settings, OPS, self.errors)
        self.jobs: Jobs[m.Job] = Jobs(self._missing, m.Job.step)

    def _missing(self, job_id: str) -> FakeError:
        return self.errors.error(404, f"The job {job_id} was not found.")


def create_app(settings: FakeSettings | None = None) -> FastAPI:
    """Build the Azure AI Language jobs fake (settings from `JOBGATE_FAKE_*` when not given)."""
    state = LanguageFake(settings or FakeSettings())
    fake, errors = state.fake, state.errors
    jobs = state.jobs
    app = fake_app("Azure AI Language jobs fake", fake, advance=jobs.advance, reset=jobs.clear)

    answer_headers(app, "/language/", lambda: {"apim-request-id": str(uuid.uuid4())})

    def require_key(request: Request) -> None:
        key = request.headers.get("ocp-apim-subscription-key")
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        given = key if key is not None else (token if scheme == "Bearer" else "")
        if not given or not hmac.compare_digest(given.encode(), fake.settings.api_key.encode()):
            raise errors.error(401, _ACCESS_DENIED)
        if request.query_params.get("api-version") not in API_VERSIONS:
            raise FakeError(404, {"error": {"code": "404", "message": "Resource not found"}})

    router = APIRouter(prefix="/language/analyze-text/jobs", dependencies=[Depends(require_key)])

    def monitor(request: Request, job_id: str) -> str:
        base, version = str(request.base_url).rstrip("/"), request.query_params["api-version"]
        return f"{base}/language/analyze-text/jobs/{job_id}?api-version={version}"

    @router.post("")
    async def submit(request: Request) -> Response:
        body = await json_object(request, errors)
        name = body.get("displayName")
        refs = [name] if isinstance(name, str) else []
        fake.stats.create_call(refs)
        problem = m.request_problem(body)
        if problem:
            inner_code, message = problem
            raise errors.error(400, "Invalid Request.", {"code": inner_code, "message": message})

        def effect() -> Response:
            job = m.Job(
                list(body["analysisInput"]["documents"]),
                list(body["tasks"]),
                name if isinstance(name, str) else None,
                str(body.get("defaultLanguage") or "en"),
            )
            jobs.add(job.job_id, job)
            fake.stats.job_created(job.job_id, refs)
            return Response(
                status_code=202, headers={"Operation-Location": monitor(request, job.job_id)}
            )

        return await fake.guarded("submit", effect)

    @router.get("/{job_id}")
    async def status(
        job_id: str,
        request: Request,
        top: int | None = Query(default=None, ge=1),
        skip: int = Query(default=0, ge=0),
        show_stats: bool = Query(default=False, alias="showStats"),
    ) -> Response:
        job = jobs.get(job_id)

        def effect() -> Response:
            job.step()
            return JSONResponse(job.to_json(monitor(request, job_id), top, skip, show_stats))

        return await fake.job_call(job_id, "status", effect)

    @router.post("/{job_id}:cancel")
    async def cancel(job_id: str, request: Request) -> Response:
        job = jobs.get(job_id)

        def effect() -> Response:
            if not job.cancel():
                raise errors.error(
                    400, f"The job {job_id} has already finished and cannot be cancelled."
                )
            return Response(
                status_code=202, headers={"Operation-Location": monitor(request, job_id)}
            )

        return await fake.job_call(job_id, "cancel", effect)

    app.include_router(router)
    return app
