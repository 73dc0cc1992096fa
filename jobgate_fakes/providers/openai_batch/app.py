"""The OpenAI Batch fake over HTTP: files, batches, file content, webhooks, rate-limit headers.

Paths, bodies and errors follow the OpenAI API reference (see the package docstring);
behaviour lives in `model`. Auth is `Authorization: Bearer <api_key>`.
"""

from __future__ import annotations

import email.parser
import email.policy
import hmac
import json
import secrets
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from jobgate_fakes.providers.base import (
    Fake,
    FakeError,
    Jobs,
    answer_headers,
    fake_app,
    id_list,
    json_object,
)
from jobgate_fakes.providers.faults import Fault
from jobgate_fakes.providers.openai_batch import model as m
from jobgate_fakes.providers.settings import FakeSettings

OPS = ("upload", "create", "retrieve", "cancel", "list", "content")
PURPOSES = frozenset(
    {"assistants", "batch", "fine-tune", "vision", "user_data", "evals", "batch_output"}
)
REQUEST_LIMIT = 10_000  # x-ratelimit-limit-requests the fake reports
TOKEN_LIMIT = 2_000_000
_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error"}
_MISSING_KEY = (
    "You didn't provide an API key. You need to provide your API key in an Authorization "
    "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field "
    "(with blank username) if you're accessing the API from your browser and are prompted for a "
    "username and password. You can obtain an API key from "
    "https://platform.openai.com/account/api-keys."
)


class OpenAIErrors:
    """`{"error": {"message", "type", "param", "code"}}`, the OpenAI error body."""

    def error(
        self, status: int, message: str, code: str | None = None, param: str | None = None
    ) -> FakeError:
        kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
        body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
        return FakeError(status, body)

    def throttled(self, fault: Fault) -> FakeError:
        body = {
            "error": {
                "message": "Rate limit reached for requests. Please try again in "
                f"{fault.retry_after}s.",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        }
        headers = {"retry-after": str(fault.retry_after), "x-ratelimit-remaining-requests": "0"}
        return FakeError(fault.answer_status(), body, headers)


class OpenAIBatchFake:
    """The fake's state: files and batches, newest batch last."""

    def __init__(self, settings: FakeSettings) -> None:
        self.errors = OpenAIErrors()
        self.fake = Fake(settings, OPS, self.errors)
        self.files: dict[str, m.StoredFile] = {}
        self.batches = Jobs(self._missing, self.step)
        self.requests_seen = 0

    def _missing(self, batch_id: str) -> FakeError:
        return self.errors.error(404, f"No batch found with id '{batch_id}'.")

    def reset(self) -> None:
        self.files.clear()
        self.batches.clear()

    def headers(self) -> dict[str, str]:
        """What every /v1 answer carries: a request id and the rate-limit state."""
        self.requests_seen += 1
        return {
            "x-request-id": "req_" + secrets.token_hex(16),
            "openai-processing-ms": "12",
            "x-ratelimit-limit-requests": str(REQUEST_LIMIT),
            "x-ratelimit-remaining-requests": str(
                REQUEST_LIMIT - self.requests_seen % REQUEST_LIMIT
            ),
            "x-ratelimit-reset-requests": "6ms",
            "x-ratelimit-limit-tokens": str(TOKEN_LIMIT),
            "x-ratelimit-remaining-tokens": str(TOKEN_LIMIT),
            "x-ratelimit-reset-tokens": "0s",
        }

    def step(self, batch: m.Batch) -> None:
        if not batch.step():
            return
        out, errs = batch.result_lines()
        if out:
            batch.output_file_id = self._store_output(batch, "output", out)
        if errs:
            batch.error_file_id = self._store_output(batch, "error", errs)
        url = self.fake.settings.webhook_url
        if url:
            kind = f"batch.{batch.status}"
            event = {
                "id": "evt_" + secrets.token_hex(12),
                "object": "event",
                "created_at": m.unix(),
                "type": kind,
                "data": {"id": batch.id},
            }
            self.fake.outbox.send(url, kind, json.dumps(event), "wh_" + secrets.token_hex(12))

    def _store_output(self, batch: m.Batch, kind: str, lines: list[str]) -> str:
        stored = m.new_file(
            f"{batch.id}_{kind}.jsonl", "batch_output", ("\n".join(lines) + "\n").encode()
        )
        self.files[stored.id] = stored
        return stored.id


def create_app(settings: FakeSettings | None = None) -> FastAPI:
    """Build the OpenAI Batch fake (settings from `JOBGATE_FAKE_*` when not given)."""
    state = OpenAIBatchFake(settings or FakeSettings())
    fake, errors = state.fake, state.errors
    app = fake_app("OpenAI Batch fake", fake, advance=state.batches.advance, reset=state.reset)

    answer_headers(app, "/v1/", state.headers)

    def require_key(request: Request) -> None:
        given = request.headers.get("authorization", "")
        if not given.startswith("Bearer ") or not given[7:].strip():
            raise errors.error(401, _MISSING_KEY)
        key = given[7:].strip()
        if not hmac.compare_digest(key.encode(), fake.settings.api_key.encode()):
            shown = key[:3] + "*" * max(0, len(key) - 7) + key[-4:]
            raise errors.error(
                401,
                f"Incorrect API key provided: {shown}. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                "invalid_api_key",
            )

    v1 = APIRouter(prefix="/v1", dependencies=[Depends(require_key)])

    @v1.post("/files")
    async def upload(request: Request) -> Response:
        fields = _multipart(await request.body(), request.headers.get("content-type", ""))
        purpose = fields.get("purpose", (None, b""))[1].decode()
        if "file" not in fields or fields["file"][0] is None:
            raise errors.error(400, "Missing required parameter: 'file'.", param="file")
        if purpose not in PURPOSES - {"batch_output"}:
            raise errors.error(400, f"Invalid value for 'purpose': '{purpose}'.", param="purpose")
        filename, content = fields["file"]
        if purpose == "batch" and not str(filename).endswith(".jsonl"):
            raise errors.error(
                400, "Invalid file format for Batch API. Must be .jsonl", param="file"
            )

        def effect() -> Response:
            stored = m.new_file(str(filename), purpose, content)
            state.files[stored.id] = stored
            return JSONResponse(stored.to_json())

        return await fake.guarded("upload", effect)

    @v1.get("/files/{file_id}")
    async def file_object(file_id: str) -> dict[str, Any]:
        return _file(file_id).to_json()

    @v1.get("/files/{file_id}/content")
    async def file_content(file_id: str) -> Response:
        stored = _file(file_id)
        for batch in state.batches.all():
            if file_id in (batch.output_file_id, batch.error_file_id):
                fake.stats.call(batch.id, "content")
        return await fake.guarded(
            "content",
            lambda: Response(stored.content, media_type="application/octet-stream"),
        )

    def _file(file_id: str) -> m.StoredFile:
        stored = state.files.get(file_id)
        if stored is None:
            raise errors.error(404, f"No such File object: {file_id}", param="id")
        return stored

    @v1.post("/batches")
    async def create_batch(request: Request) -> Response:
        body = await json_object(request, errors)
        metadata = body.get("metadata")
        _check_metadata(metadata)
        refs = [f"{k}={v}" for k, v in (metadata or {}).items()]
        fake.stats.create_call(refs)
        endpoint, window = body.get("endpoint"), body.get("completion_window")
        if endpoint not in m.ENDPOINTS:
            raise errors.error(
                400, f"Invalid value for 'endpoint': {endpoint!r}.", param="endpoint"
            )
        if window != "24h":
            raise errors.error(
                400,
                "Invalid value for 'completion_window': only '24h' is supported.",
                param="completion_window",
            )
        input_id = body.get("input_file_id")
        stored = state.files.get(input_id) if isinstance(input_id, str) else None
        if stored is None:
            raise errors.error(400, f"No such File object: {input_id}", param="input_file_id")
        if stored.purpose != "batch":
            raise errors.error(
                400,
                f"File {input_id} must be uploaded with purpose 'batch'.",
                param="input_file_id",
            )

        def effect() -> Response:
            reqs, problems = m.parse_input(stored.content, str(endpoint))
            batch = m.Batch(
                "batch_" + secrets.token_hex(16),
                stored.id,
                str(endpoint),
                "24h",
                metadata,
                reqs,
                problems,
            )
            state.batches.add(batch.id, batch)
            fake.stats.job_created(batch.id, refs)
            return JSONResponse(batch.to_json())

        return await fake.guarded("create", effect)

    def _check_metadata(metadata: Any) -> None:
        if metadata is None:
            return
        if not isinstance(metadata, dict) or len(metadata) > 16:
            raise errors.error(
                400, "metadata must be an object of at most 16 pairs", param="metadata"
            )
        for key, value in metadata.items():
            if len(key) > 64 or not isinstance(value, str) or len(value) > 512:
                raise errors.error(
                    400,
                    "metadata keys are at most 64 characters, values strings of at most 512",
                    param="metadata",
                )

    @v1.get("/batches/{batch_id}")
    async def retrieve(batch_id: str) -> Response:
        batch = state.batches.get(batch_id)

        def effect() -> Response:
            state.step(batch)
            return JSONResponse(batch.to_json())

        return await fake.job_call(batch_id, "retrieve", effect)

    @v1.post("/batches/{batch_id}/cancel")
    async def cancel(batch_id: str) -> Response:
        batch = state.batches.get(batch_id)

        def effect() -> Response:
            if not batch.cancel():
                raise errors.error(400, f"Cannot cancel a batch with status '{batch.status}'.")
            return JSONResponse(batch.to_json())

        return await fake.job_call(batch_id, "cancel", effect)

    @v1.get("/batches")
    async def list_batches(after: str | None = None, limit: int = 20) -> Response:
        fake.stats.list_call()
        if not 1 <= limit <= 100:
            raise errors.error(400, "limit must be between 1 and 100", param="limit")
        newest_first = state.batches.newest_first()

        def effect() -> Response:
            page = id_list(newest_first, lambda b: b.id, m.Batch.to_json, limit=limit, after=after)
            return JSONResponse({"object": "list", **page})

        return await fake.guarded("list", effect)

    app.include_router(v1)
    return app


def _multipart(body: bytes, content_type: str) -> dict[str, tuple[str | None, bytes]]:
    """The parts of a multipart/form-data body: name -> (filename or None, bytes)."""
    if not content_type.startswith("multipart/form-data"):
        return {}
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if isinstance(name, str):
            payload = part.get_payload(decode=True)
            fields[name] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    return fields
