"""The Anthropic Message Batches fake over HTTP: create, retrieve, list, cancel, results, delete.

Every `/v1` call needs `x-api-key` and `anthropic-version`; answers carry `request-id`
and the `anthropic-ratelimit-*` headers; errors are `{"type": "error", "error": {...}}`.
"""

from __future__ import annotations

import hmac
from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from jobgate_fakes.providers.anthropic_batches import model as m
from jobgate_fakes.providers.base import (
    Fake,
    FakeError,
    Jobs,
    answer_headers,
    fake_app,
    id_list,
    json_object,
    now,
    rfc3339,
)
from jobgate_fakes.providers.faults import Fault
from jobgate_fakes.providers.settings import FakeSettings

OPS = ("create", "retrieve", "list", "cancel", "results", "delete")
VERSIONS = frozenset({"2023-06-01", "2023-01-01"})
REQUEST_LIMIT = 4_000
TOKEN_LIMIT = 400_000
# The error `type` the reference gives each status ("HTTP errors").
_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


class AnthropicErrors:
    """`{"type": "error", "error": {"type", "message"}, "request_id"}`."""

    def error(self, status: int, message: str) -> FakeError:
        kind = _TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return FakeError(status, _body(kind, message))

    def throttled(self, fault: Fault) -> FakeError:
        reset = rfc3339(now().replace(microsecond=0) + timedelta(seconds=fault.retry_after))
        headers = {
            "retry-after": str(fault.retry_after),
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": reset,
        }
        body = _body(
            "rate_limit_error", "Number of request per minute has exceeded your rate limit."
        )
        return FakeError(fault.answer_status(), body, headers)


def _body(kind: str, message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": m.new_id("req_"),
    }


class AnthropicBatchesFake:
    """The fake's state: batches, oldest first."""

    def __init__(self, settings: FakeSettings) -> None:
        self.errors = AnthropicErrors()
        self.fake = Fake(settings, OPS, self.errors)
        self.batches: Jobs[m.MessageBatch] = Jobs(self._missing, m.MessageBatch.step)
        self.requests_seen = 0

    def _missing(self, batch_id: str) -> FakeError:
        return self.errors.error(404, f"Message batch {batch_id} not found.")

    def headers(self) -> dict[str, str]:
        """What every /v1 answer carries: a request id and the rate-limit state."""
        self.requests_seen += 1
        reset = rfc3339(now().replace(microsecond=0) + timedelta(seconds=60))
        remaining = REQUEST_LIMIT - self.requests_seen % REQUEST_LIMIT
        return {
            "request-id": m.new_id("req_"),
            "anthropic-ratelimit-requests-limit": str(REQUEST_LIMIT),
            "anthropic-ratelimit-requests-remaining": str(remaining),
            "anthropic-ratelimit-requests-reset": reset,
            "anthropic-ratelimit-tokens-limit": str(TOKEN_LIMIT),
            "anthropic-ratelimit-tokens-remaining": str(TOKEN_LIMIT),
            "anthropic-ratelimit-tokens-reset": reset,
        }


def create_app(settings: FakeSettings | None = None) -> FastAPI:
    """Build the Anthropic Message Batches fake (settings from `JOBGATE_FAKE_*` when not given)."""
    state = AnthropicBatchesFake(settings or FakeSettings())
    fake, errors = state.fake, state.errors
    batches = state.batches
    app = fake_app(
        "Anthropic Message Batches fake", fake, advance=batches.advance, reset=batches.clear
    )

    answer_headers(app, "/v1/", state.headers)

    def require_headers(request: Request) -> None:
        key = request.headers.get("x-api-key")
        if not key:
            raise errors.error(401, "x-api-key header is required")
        if not hmac.compare_digest(key.encode(), fake.settings.api_key.encode()):
            raise errors.error(401, "invalid x-api-key")
        version = request.headers.get("anthropic-version")
        if not version:
            raise errors.error(400, "anthropic-version: header is required")
        if version not in VERSIONS:
            raise errors.error(400, f"anthropic-version: invalid version {version!r}")

    v1 = APIRouter(prefix="/v1/messages/batches", dependencies=[Depends(require_headers)])

    def base_url(request: Request) -> str:
        return str(request.base_url).rstrip("/")

    @v1.post("")
    async def create(request: Request) -> Response:
        body = await json_object(request, errors)
        requests = body.get("requests")
        refs = [
            item["custom_id"]
            for item in (requests if isinstance(requests, list) else [])
            if isinstance(item, dict) and isinstance(item.get("custom_id"), str)
        ]
        fake.stats.create_call(refs)
        problem = m.envelope_problem(body)
        if problem:
            raise errors.error(400, problem)

        def effect() -> Response:
            items = [m.Item(r["custom_id"], r["params"]) for r in body["requests"]]
            batch = m.MessageBatch(m.new_id("msgbatch_"), items)
            batches.add(batch.id, batch)
            fake.stats.job_created(batch.id, refs)
            return JSONResponse(batch.to_json(base_url(request)))

        return await fake.guarded("create", effect)

    @v1.get("/{batch_id}")
    async def retrieve(batch_id: str, request: Request) -> Response:
        batch = batches.get(batch_id)

        def effect() -> Response:
            batch.step()
            return JSONResponse(batch.to_json(base_url(request)))

        return await fake.job_call(batch_id, "retrieve", effect)

    @v1.get("")
    async def list_batches(
        request: Request,
        before_id: str | None = None,
        after_id: str | None = None,
        limit: int = 20,
    ) -> Response:
        fake.stats.list_call()
        if not 1 <= limit <= 1000:
            raise errors.error(400, "limit: Input should be between 1 and 1000")
        newest_first = batches.newest_first()

        def effect() -> Response:
            return JSONResponse(
                id_list(
                    newest_first,
                    lambda b: b.id,
                    lambda b: b.to_json(base_url(request)),
                    limit=limit,
                    after=after_id,
                    before=before_id,
                )
            )

        return await fake.guarded("list", effect)

    @v1.post("/{batch_id}/cancel")
    async def cancel(batch_id: str, request: Request) -> Response:
        batch = batches.get(batch_id)

        def effect() -> Response:
            if not batch.cancel():
                raise errors.error(400, f"Message batch {batch_id} has already ended.")
            return JSONResponse(batch.to_json(base_url(request)))

        return await fake.job_call(batch_id, "cancel", effect)

    @v1.get("/{batch_id}/results")
    async def results(batch_id: str) -> Response:
        batch = batches.get(batch_id)
        if batch.status != "ended":
            raise errors.error(
                400, f"Message batch {batch_id} has not ended; results are not ready."
            )
        return await fake.job_call(
            batch_id,
            "results",
            lambda: Response(batch.results_jsonl(), media_type="application/binary"),
        )

    @v1.delete("/{batch_id}")
    async def delete(batch_id: str) -> Response:
        batch = batches.get(batch_id)
        if batch.status != "ended":
            raise errors.error(
                400, "Message batches can only be deleted once they have finished processing."
            )

        def effect() -> Response:
            batches.remove(batch_id)
            return JSONResponse({"id": batch_id, "type": "message_batch_deleted"})

        return await fake.guarded("delete", effect)

    app.include_router(v1)
    return app
