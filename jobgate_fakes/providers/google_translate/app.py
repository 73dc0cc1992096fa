"""The Cloud Translation v3 batch fake over HTTP: batchTranslateText and its operations.

Auth is `Authorization: Bearer <access token>` (the fake's `api_key`). Errors are
`{"error": {"code", "message", "status", "details"}}` with google.rpc detail types.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse, Response

from jobgate_fakes.providers import googleapis
from jobgate_fakes.providers.base import Fake, FakeError, Jobs, fake_app, json_object
from jobgate_fakes.providers.google_translate import model as m
from jobgate_fakes.providers.googleapis import (
    GoogleErrors,
    Quota,
    bearer_guard,
    project_number,
)
from jobgate_fakes.providers.settings import FakeSettings

OPS = ("create", "get", "cancel", "list", "delete")
SERVICE = "translate.googleapis.com"
_QUOTA = Quota(
    "Batch translation requests",
    "Batch translation requests per minute",
    "BatchTranslateRequestsPerMinute",
)


class TranslationFake:
    """The fake's state: operations by name, oldest first, and the output prefixes used."""

    def __init__(self, settings: FakeSettings) -> None:
        self.errors = GoogleErrors(SERVICE, lambda _op: _QUOTA)
        self.fake = Fake(settings, OPS, self.errors)
        self.operations: Jobs[m.Operation] = Jobs(self._missing, m.Operation.step)
        self.prefixes: set[str] = set()

    def reset(self) -> None:
        self.operations.clear()
        self.prefixes.clear()

    def _missing(self, name: str) -> FakeError:
        return self.errors.error(404, f"Operation {name} not found.")

    def get(self, project: str, location: str, op_id: str) -> m.Operation:
        name = f"projects/{project_number(project)}/locations/{location}/operations/{op_id}"
        return self.operations.get(name)


def create_app(settings: FakeSettings | None = None) -> FastAPI:
    """Build the Cloud Translation batch fake (settings from `JOBGATE_FAKE_*` when not given)."""
    state = TranslationFake(settings or FakeSettings())
    fake, errors = state.fake, state.errors
    app = fake_app(
        "Cloud Translation v3 batch fake", fake, advance=state.operations.advance, reset=state.reset
    )

    v3 = APIRouter(
        prefix="/v3/projects/{project}/locations/{location}",
        dependencies=[Depends(bearer_guard(fake, errors))],
    )

    @v3.post(":batchTranslateText")
    async def batch_translate(project: str, location: str, request: Request) -> Response:
        body = await json_object(request, errors)
        labels = body.get("labels")
        refs = [f"{k}={v}" for k, v in labels.items()] if isinstance(labels, dict) else []
        fake.stats.create_call(refs)
        if location == "global":
            raise errors.error(400, "The global location is not supported for batch translation.")
        problem = m.request_problem(body)
        if problem:
            raise errors.error(400, problem)
        prefix = m.output_prefix(body)
        if prefix in state.prefixes:
            raise errors.error(
                400,
                f"Output directory {prefix} is not empty or is used by another batch "
                "translation job. Use an empty output_uri_prefix.",
            )

        def effect() -> Response:
            parent = f"projects/{project_number(project)}/locations/{location}"
            op = m.Operation.start(parent, body)
            state.operations.add(op.name, op)
            state.prefixes.add(str(prefix))
            fake.stats.job_created(op.name, refs)
            return JSONResponse(op.to_json())

        return await fake.guarded("create", effect)

    @v3.get("/operations/{op_id}")
    async def get_operation(project: str, location: str, op_id: str) -> Response:
        op = state.get(project, location, op_id)

        def effect() -> Response:
            op.step()
            return JSONResponse(op.to_json())

        return await fake.job_call(op.name, "get", effect)

    @v3.post("/operations/{op_id}:cancel")
    async def cancel_operation(project: str, location: str, op_id: str) -> Response:
        op = state.get(project, location, op_id)

        def effect() -> Response:
            op.cancel()
            return JSONResponse({})

        return await fake.job_call(op.name, "cancel", effect)

    @v3.delete("/operations/{op_id}")
    async def delete_operation(project: str, location: str, op_id: str) -> Response:
        op = state.get(project, location, op_id)

        def effect() -> Response:
            state.operations.remove(op.name)
            return JSONResponse({})

        return await fake.guarded("delete", effect)

    @v3.get("/operations")
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

    app.include_router(v3)
    return app


def _filter(text: str, errors: GoogleErrors) -> Callable[[m.Operation], bool]:
    """A predicate for the filter subset the fake understands: `done=` and `metadata.state=`."""
    terms: list[tuple[str, str]] = []
    for part in filter(None, (p.strip() for p in text.split(" AND "))):
        field_name, sep, value = (x.strip().strip('"') for x in part.partition("="))
        if not sep or field_name not in ("done", "metadata.state"):
            raise errors.error(
                400, f"Unsupported filter {part!r}: the fake knows done= and metadata.state=."
            )
        terms.append((field_name, value))

    def match(op: m.Operation) -> bool:
        for field_name, value in terms:
            actual = str(op.done).lower() if field_name == "done" else op.state
            if actual != value:
                return False
        return True

    return match
