"""The Document AI v1 batch fake over HTTP: batchProcess and its long-running operations.

Auth is `Authorization: Bearer <access token>` (the fake's `api_key`). Errors are
`{"error": {"code", "message", "status", "details"}}` with google.rpc detail types
(jobgate_fakes/providers/googleapis.py). Every processor and processor version exists
except those whose id starts with `missing` (404 NOT_FOUND): the fake has no
processor registry, and a profile is tested with whatever id it is given.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse, Response

from jobgate_fakes.providers import googleapis
from jobgate_fakes.providers.base import Fake, FakeError, Jobs, fake_app, json_object
from jobgate_fakes.providers.google_document_ai import model as m
from jobgate_fakes.providers.google_document_ai import request as r
from jobgate_fakes.providers.googleapis import (
    GoogleErrors,
    Quota,
    bearer_guard,
    project_number,
)
from jobgate_fakes.providers.settings import FakeSettings

OPS = ("create", "get", "cancel", "list")
SERVICE = "documentai.googleapis.com"
MISSING_PREFIX = "missing"
BATCH_TYPE = "BATCH_PROCESS_DOCUMENTS"
# The quotas on Document AI's quotas page that a throttled call of each op runs into.
_BATCH_QUOTA = Quota(
    "Concurrent batch process requests",
    "Concurrent batch process requests per project",
    "ConcurrentBatchProcessRequestsPerProject",
)
_REQUEST_QUOTA = Quota("Requests", "Requests per minute per user", "RequestsPerMinutePerUser")


class DocumentAIFake:
    """The fake's state: operations by name, oldest first."""

    def __init__(self, settings: FakeSettings) -> None:
        self.errors = GoogleErrors(
            SERVICE, lambda op: _BATCH_QUOTA if op == "create" else _REQUEST_QUOTA
        )
        self.fake = Fake(settings, OPS, self.errors)
        self.operations: Jobs[m.Operation] = Jobs(self._missing, m.Operation.step)

    def _missing(self, name: str) -> FakeError:
        return self.errors.error(404, f"Operation {name} not found.")

    def get(self, project: str, location: str, op_id: str) -> m.Operation:
        name = f"projects/{project_number(project)}/locations/{location}/operations/{op_id}"
        return self.operations.get(name)

    def find(self, project: str, op_id: str) -> m.Operation:
        """The operation by project and id, in whichever location it runs."""
        prefix = f"projects/{project_number(project)}/locations/"
        for op in self.operations.all():
            if op.name.startswith(prefix) and op.op_id == op_id:
                return op
        raise self._missing(f"projects/{project}/operations/{op_id}")


def create_app(settings: FakeSettings | None = None) -> FastAPI:
    """Build the Document AI batch fake (settings from `JOBGATE_FAKE_*` when not given)."""
    state = DocumentAIFake(settings or FakeSettings())
    fake, errors = state.fake, state.errors
    app = fake_app(
        "Document AI v1 batch fake",
        fake,
        advance=state.operations.advance,
        reset=state.operations.clear,
    )
    guard = [Depends(bearer_guard(fake, errors))]
    v1 = APIRouter(prefix="/v1/projects/{project}/locations/{location}", dependencies=guard)

    async def batch_process(
        project: str, location: str, processor: str, version: str | None, request: Request
    ) -> Response:
        body = await json_object(request, errors)
        labels = body.get("labels")
        refs = [f"{k}={v}" for k, v in labels.items()] if isinstance(labels, dict) else []
        fake.stats.create_call(refs)
        resource = f"projects/{project}/locations/{location}/processors/{processor}"
        if processor.startswith(MISSING_PREFIX):
            raise errors.error(404, f"Processor '{resource}' not found.")
        if version is not None and version.startswith(MISSING_PREFIX):
            raise errors.error(
                404, f"ProcessorVersion '{resource}/processorVersions/{version}' not found."
            )
        parsed = r.parse(body, errors)

        def effect() -> Response:
            parent = f"projects/{project_number(project)}/locations/{location}"
            op = m.Operation.start(
                parent,
                parsed.documents,
                parsed.output_uri,
                parsed.labels,
                fake.settings.documents_per_read,
            )
            state.operations.add(op.name, op)
            fake.stats.job_created(op.name, refs)
            return JSONResponse(op.to_json())

        return await fake.guarded("create", effect)

    @v1.post("/processors/{processor}:batchProcess")
    async def batch_process_processor(
        project: str, location: str, processor: str, request: Request
    ) -> Response:
        return await batch_process(project, location, processor, None, request)

    @v1.post("/processors/{processor}/processorVersions/{version}:batchProcess")
    async def batch_process_version(
        project: str, location: str, processor: str, version: str, request: Request
    ) -> Response:
        return await batch_process(project, location, processor, version, request)

    async def read(op: m.Operation) -> Response:
        def effect() -> Response:
            op.step()
            return JSONResponse(op.to_json())

        return await fake.job_call(op.name, "get", effect)

    @v1.get("/operations/{op_id}")
    async def get_operation(project: str, location: str, op_id: str) -> Response:
        return await read(state.get(project, location, op_id))

    @app.get("/v1/projects/{project}/operations/{op_id}", dependencies=guard)
    async def get_project_operation(project: str, op_id: str) -> Response:
        return await read(state.find(project, op_id))

    @v1.post("/operations/{op_id}:cancel")
    async def cancel_operation(project: str, location: str, op_id: str) -> Response:
        op = state.get(project, location, op_id)

        def effect() -> Response:
            op.cancel()
            return JSONResponse({})

        return await fake.job_call(op.name, "cancel", effect)

    @v1.get("/operations")
    async def list_operations(
        project: str,
        location: str,
        filter: str = "",
        page_size: int = Query(default=0, alias="pageSize"),
        page_token: str = Query(default="", alias="pageToken"),
    ) -> Response:
        fake.stats.list_call()
        parent = f"projects/{project_number(project)}/locations/{location}/"
        return await googleapis.list_operations(
            fake,
            state.operations.newest_first(),
            parent,
            _filter(filter, errors),
            page_size,
            page_token,
            errors,
        )

    app.include_router(v1)
    return app


def _filter(text: str, errors: GoogleErrors) -> Callable[[m.Operation], bool]:
    """A predicate for Document AI's operation filter: `TYPE=` and `STATE=`, joined by AND."""
    terms: list[tuple[str, str]] = []
    for part in filter(None, (p.strip() for p in text.split(" AND "))):
        key, sep, value = (x.strip().strip('"') for x in part.partition("="))
        known = key == "TYPE" or (key == "STATE" and value in (*m.STATES, "DONE"))
        if not sep or not known:
            raise errors.invalid(
                f"Unsupported filter {part!r}: the fake knows TYPE={BATCH_TYPE} and "
                f"STATE=<{'|'.join((*m.STATES, 'DONE'))}>.",
                "filter",
            )
        terms.append((key, value))

    def match(op: m.Operation) -> bool:
        for key, value in terms:
            if key == "TYPE" and value != BATCH_TYPE:
                return False  # the fake makes batchProcess operations only
            if key == "STATE" and not (op.state == value or (value == "DONE" and op.done)):
                return False
        return True

    return match
