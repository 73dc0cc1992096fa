"""OpenAI Batch objects and their life, as plain data driven by status reads (no HTTP here).

A batch is `validating` when created. Its first step validates the input file
(`failed` with `errors.data` on a bad line) or starts it (`in_progress`); every later
step is one hour (batchwork.py): requests whose hours are spent are done, and
`request_counts` follow. When all are done the batch is `finalizing`, one step later
`completed` with its files. At hour 24 with requests left it is `expired`: done
requests are in the output/error files, the rest are `batch_expired` lines in the
error file. A cancel makes it `cancelling`; the next step makes it `cancelled`, with
the requests done so far in its files.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from jobgate_fakes.providers import batchwork
from jobgate_fakes.providers.base import now

ENDPOINTS = (
    "/v1/responses",
    "/v1/chat/completions",
    "/v1/embeddings",
    "/v1/completions",
    "/v1/moderations",
    "/v1/images/generations",
    "/v1/images/edits",
    "/v1/videos",
)
TERMINAL = frozenset({"failed", "completed", "expired", "cancelled"})
CANCELLABLE = frozenset({"validating", "in_progress", "finalizing"})
EXPIRED_ERROR = {
    "code": "batch_expired",
    "message": "This request could not be executed before the completion window expired.",
}


def unix() -> int:
    """Seconds since the epoch (OpenAI's timestamps)."""
    return int(now().timestamp())


@dataclass
class StoredFile:
    """An uploaded or generated file: the object the API shows, and its bytes."""

    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: int = field(default_factory=unix)

    def to_json(self) -> dict[str, Any]:
        """The File object."""
        expires = self.created_at + 30 * 86400 if self.purpose.startswith("batch") else None
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "expires_at": expires,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "status_details": None,
        }


def new_file(filename: str, purpose: str, content: bytes) -> StoredFile:
    """A file with a fresh id."""
    return StoredFile("file-" + secrets.token_hex(11), filename, purpose, content)


@dataclass
class BatchRequest:
    """One line of the input file."""

    line: int
    custom_id: str
    body: dict[str, Any]

    @property
    def hours(self) -> int:
        return batchwork.hours_needed(self.body)


def parse_input(content: bytes, endpoint: str) -> tuple[list[BatchRequest], list[dict[str, Any]]]:
    """The requests of a JSONL input file, or the validation errors that fail the batch."""
    requests: list[BatchRequest] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()

    def err(line: int, code: str, message: str, param: str | None = None) -> None:
        errors.append({"code": code, "line": line, "message": message, "param": param})

    for number, raw in enumerate(content.decode("utf-8", "replace").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except ValueError:
            err(number, "invalid_json_line", "This line is not parseable as valid JSON.")
            continue
        if not isinstance(item, dict):
            err(number, "invalid_json_line", "This line is not a JSON object.")
            continue
        custom_id, body = item.get("custom_id"), item.get("body")
        if not isinstance(custom_id, str) or not custom_id:
            err(number, "missing_required_parameter", "Missing 'custom_id'.", "custom_id")
        elif custom_id in seen:
            err(number, "duplicate_custom_id", f"Duplicate custom_id '{custom_id}'.", "custom_id")
        elif item.get("url") != endpoint:
            err(number, "invalid_url", f"The url must be '{endpoint}', as the batch.", "url")
        elif item.get("method") != "POST":
            err(number, "invalid_method", "The method must be 'POST'.", "method")
        elif not isinstance(body, dict):
            err(number, "missing_required_parameter", "Missing 'body'.", "body")
        else:
            seen.add(custom_id)
            requests.append(BatchRequest(number, custom_id, body))
    if not requests and not errors:
        err(1, "empty_file", "The input file has no requests.")
    return requests, errors


@dataclass
class Batch:
    """One batch and the clock that moves it (`hours`, advanced by `step`)."""

    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, str] | None
    requests: list[BatchRequest]
    validation_errors: list[dict[str, Any]]
    status: str = "validating"
    hours: int = 0
    created_at: int = field(default_factory=unix)
    times: dict[str, int] = field(default_factory=dict)
    output_file_id: str | None = None
    error_file_id: str | None = None

    def done(self) -> list[BatchRequest]:
        """The requests processed so far."""
        if self.status == "validating" or self.validation_errors:
            return []
        return [r for r in self.requests if r.hours <= self.hours]

    def cancel(self) -> bool:
        """Record a cancel; False when the batch can no longer be cancelled."""
        if self.status == "cancelling":
            return True
        if self.status not in CANCELLABLE:
            return False
        self.status, self.times["cancelling_at"] = "cancelling", unix()
        return True

    def step(self) -> bool:
        """One hour passes (or the first read validates); True when this step ended it."""
        if self.status in TERMINAL:
            return False
        if self.status == "validating":
            if self.validation_errors:
                return self._end("failed")
            self.status, self.times["in_progress_at"] = "in_progress", unix()
        elif self.status == "in_progress":
            self.hours += 1
            if len(self.done()) == len(self.requests):
                self.status, self.times["finalizing_at"] = "finalizing", unix()
            elif self.hours >= batchwork.WINDOW_HOURS:
                return self._end("expired")
        elif self.status == "finalizing":
            return self._end("completed")
        elif self.status == "cancelling":
            return self._end("cancelled")
        return False

    def _end(self, status: str) -> bool:
        self.status, self.times[f"{status}_at"] = status, unix()
        return True

    def result_lines(self) -> tuple[list[str], list[str]]:
        """The output file lines and the error file lines of a finished batch."""
        out: list[str] = []
        errs: list[str] = []
        for req in batchwork.result_order(self.done(), lambda r: r.custom_id):
            line = _result_line(req, self.endpoint)
            (errs if batchwork.refused(req.body) else out).append(line)
        if self.status == "expired":
            left = [r for r in self.requests if r.hours > self.hours]
            for req in batchwork.result_order(left, lambda r: r.custom_id):
                errs.append(_line(req.custom_id, None, EXPIRED_ERROR))
        return out, errs

    def to_json(self) -> dict[str, Any]:
        """The Batch object."""
        done = self.done()
        failed = sum(1 for r in done if batchwork.refused(r.body))
        counts = {"total": 0, "completed": 0, "failed": 0}
        if self.status != "validating" and not self.validation_errors:
            counts = {
                "total": len(self.requests),
                "completed": len(done) - failed,
                "failed": failed,
            }
        errors = (
            {"object": "list", "data": self.validation_errors} if self.validation_errors else None
        )
        stamps = ("in_progress", "finalizing", "completed", "failed", "expired", "cancelling")
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "model": _model_of(self.requests),
            "errors": errors if self.status == "failed" else None,
            "input_file_id": self.input_file_id,
            "completion_window": self.completion_window,
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "expires_at": self.created_at + batchwork.WINDOW_HOURS * 3600,
            **{f"{s}_at": self.times.get(f"{s}_at") for s in stamps},
            "cancelled_at": self.times.get("cancelled_at"),
            "request_counts": counts,
            "metadata": self.metadata,
        }


def _model_of(requests: list[BatchRequest]) -> str | None:
    models = [r.body.get("model") for r in requests if isinstance(r.body.get("model"), str)]
    return models[0] if models else None


def _line(custom_id: str, response: dict[str, Any] | None, error: dict[str, Any] | None) -> str:
    return json.dumps(
        {
            "id": "batch_req_" + secrets.token_hex(12),
            "custom_id": custom_id,
            "response": response,
            "error": error,
        }
    )


def _result_line(req: BatchRequest, endpoint: str) -> str:
    request_id = "req_" + hashlib.sha256(req.custom_id.encode()).hexdigest()[:24]
    model = str(req.body.get("model", ""))
    if batchwork.refused(req.body):
        body: dict[str, Any] = {
            "error": {
                "message": f"The model `{model}` does not exist or you do not have access to it.",
                "type": "invalid_request_error",
                "param": None,
                "code": "model_not_found",
            }
        }
        return _line(
            req.custom_id, {"status_code": 404, "request_id": request_id, "body": body}, None
        )
    response = {"status_code": 200, "request_id": request_id, "body": _answer(req, endpoint, model)}
    return _line(req.custom_id, response, None)


def _answer(req: BatchRequest, endpoint: str, model: str) -> dict[str, Any]:
    text = batchwork.fake_text(req.custom_id)
    usage = {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21}
    created = unix()
    if endpoint == "/v1/chat/completions":
        return {
            "id": "chatcmpl-" + secrets.token_hex(12),
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": usage,
        }
    if endpoint == "/v1/embeddings":
        digest = hashlib.sha256(req.custom_id.encode()).digest()
        vector = [round(b / 255 - 0.5, 6) for b in digest[:8]]
        return {
            "object": "list",
            "data": [{"object": "embedding", "index": 0, "embedding": vector}],
            "model": model,
            "usage": {"prompt_tokens": 9, "total_tokens": 9},
        }
    if endpoint == "/v1/responses":
        return {
            "id": "resp_" + secrets.token_hex(12),
            "object": "response",
            "created_at": created,
            "status": "completed",
            "model": model,
            "output": [
                {
                    "type": "message",
                    "id": "msg_" + secrets.token_hex(12),
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
            "usage": {"input_tokens": 9, "output_tokens": 12, "total_tokens": 21},
        }
    if endpoint == "/v1/completions":
        return {
            "id": "cmpl-" + secrets.token_hex(12),
            "object": "text_completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"}],
            "usage": usage,
        }
    # Moderations, images and videos: accepted, answered with a placeholder body.
    return {"id": "fake-" + secrets.token_hex(8), "object": "fake.result", "model": model}
