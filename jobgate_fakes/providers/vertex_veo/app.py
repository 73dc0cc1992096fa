"""The Vertex AI Veo fake over HTTP: predictLongRunning and fetchPredictOperation.

Auth is `Authorization: Bearer <access token>` (the fake's `api_key`). Errors are
`{"error": {"code", "message", "status", "details"}}` (jobgate_fakes/providers/googleapis.py).
Every model exists except those whose id starts with `missing` (404 NOT_FOUND). A 429
names Vertex's online prediction quota; Vertex sends no `Retry-After`, and a fault with
`retry_after: 0` answers without the RetryInfo detail too (a throttled call with no hint).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from jobgate_fakes.providers.base import Fake, FakeError, Jobs, fake_app, json_object
from jobgate_fakes.providers.faults import Fault
from jobgate_fakes.providers.googleapis import GoogleErrors, Quota, bearer_guard, project_number
from jobgate_fakes.providers.settings import FakeSettings
from jobgate_fakes.providers.vertex_veo import model as m

OPS = ("create", "fetch")
SERVICE = "aiplatform.googleapis.com"
MISSING_PREFIX = "missing"
_QUOTA = Quota(
    "Online prediction requests per base model",
    "Online prediction requests per base model per minute per region per base_model",
    "OnlinePredictionRequestsPerBaseModelPerMinutePerProjectPerRegion",
)


class VertexErrors(GoogleErrors):
    """Google's errors; a 429 of a fault with no retry hint carries no RetryInfo."""

    def throttled(self, fault: Fault) -> FakeError:
        if fault.retry_after > 0:
            return super().throttled(fault)
        return self.error(
            fault.answer_status(),
            f"Quota exceeded for {SERVICE}/{_QUOTA.limit_id} with base model.",
            [self.error_info("RATE_LIMIT_EXCEEDED", quota_limit=_QUOTA.limit_id)],
        )


class VertexFake:
    """The fake's state: operations by name, oldest first."""

    def __init__(self, settings: FakeSettings) -> None:
        self.errors = VertexErrors(SERVICE, lambda _: _QUOTA)
        self.fake = Fake(settings, OPS, self.errors)
        self.operations: Jobs[m.Operation] = Jobs(self._missing, m.Operation.step)

    def _missing(self, name: str) -> FakeError:
        return self.errors.error(404, f"Operation {name} not found.")


def create_app(settings: FakeSettings | None = None) -> FastAPI:
    """Build the Vertex AI Veo fake (settings from `JOBGATE_FAKE_*` when not given)."""
    state = VertexFake(settings or FakeSettings())
    fake, errors = state.fake, state.errors
    app = fake_app(
        "Vertex AI Veo fake", fake, advance=state.operations.advance, reset=state.operations.clear
    )
    guard = [Depends(bearer_guard(fake, errors))]
    models = APIRouter(
        prefix="/v1/projects/{project}/locations/{location}/publishers/google/models",
        dependencies=guard,
    )

    def parent_of(project: str, location: str, model: str) -> str:
        number = project_number(project)
        return f"projects/{number}/locations/{location}/publishers/google/models/{model}"

    def known(model: str, project: str, location: str) -> None:
        if model.startswith(MISSING_PREFIX):
            raise errors.error(
                404,
                f"Publisher Model `projects/{project}/locations/{location}/publishers/google/"
                f"models/{model}` not found.",
            )

    @models.post("/{model}:predictLongRunning")
    async def predict_long_running(
        project: str, location: str, model: str, request: Request
    ) -> Response:
        body = await json_object(request, errors)
        labels = body.get("labels")
        refs = [f"{k}={v}" for k, v in labels.items()] if isinstance(labels, dict) else []
        fake.stats.create_call(refs)
        known(model, project, location)
        found = m.problems(body)
        if found:
            field, why = found[0]
            raise errors.invalid(why, field)

        def effect() -> Response:
            op = m.Operation.start(parent_of(project, location, model), body)
            state.operations.add(op.name, op)
            fake.stats.job_created(op.name, refs)
            return JSONResponse({"name": op.name})

        return await fake.guarded("create", effect)

    @models.post("/{model}:fetchPredictOperation")
    async def fetch_predict_operation(
        project: str, location: str, model: str, request: Request
    ) -> Response:
        body: dict[str, Any] = await json_object(request, errors)
        name = body.get("operationName")
        if not isinstance(name, str) or not name:
            raise errors.invalid("operationName is required.", "operation_name")
        known(model, project, location)
        if not name.startswith(parent_of(project, location, model) + "/operations/"):
            raise errors.invalid(
                f"Operation {name} does not belong to model {model} in {location}.",
                "operation_name",
            )
        op = state.operations.get(name)

        def effect() -> Response:
            op.step()
            return JSONResponse(op.to_json())

        return await fake.job_call(op.name, "fetch", effect)

    app.include_router(models)
    return app
