"""The Replicate predictions fake over HTTP: create (sync or async), get, cancel, list, webhooks.

Auth is `Authorization: Bearer <token>` (the legacy `Token <token>` is accepted too).
Errors are problem-details bodies (`title`, `detail`, `status`).
"""

from __future__ import annotations

import base64
import hmac
import json
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from jobgate_fakes.providers.base import Fake, FakeError, Jobs, fake_app, json_object
from jobgate_fakes.providers.faults import Fault
from jobgate_fakes.providers.replicate_predictions import model as m
from jobgate_fakes.providers.settings import FakeSettings

OPS = ("create", "get", "cancel", "list", "webhook_secret")
MAX_WAIT = 60
_TITLES = {
    400: "Bad request",
    401: "Unauthenticated",
    404: "Not found",
    422: "Input validation failed",
    500: "Internal server error",
    503: "Service unavailable",
}


class ReplicateErrors:
    """Problem details (RFC 7807), as replicate-python's `ReplicateError` reads them."""

    def error(self, status: int, message: str, **extra: Any) -> FakeError:
        title = _TITLES.get(status, "Server error" if status >= 500 else "Bad request")
        return FakeError(status, {"title": title, "detail": message, "status": status, **extra})

    def throttled(self, fault: Fault) -> FakeError:
        s = "" if fault.retry_after == 1 else "s"
        body = {
            "detail": f"Request was throttled. Expected available in {fault.retry_after} second{s}."
        }
        return FakeError(fault.answer_status(), body, {"retry-after": str(fault.retry_after)})


class ReplicateFake:
    """The fake's state: predictions, oldest first."""

    def __init__(self, settings: FakeSettings) -> None:
        self.errors = ReplicateErrors()
        self.fake = Fake(settings, OPS, self.errors)
        self.predictions = Jobs(lambda _: self.errors.error(404, "Not found."), self.tick)
        self.base_url = "http://127.0.0.1"  # replaced by the first request's own base URL

    def tick(self, prediction: m.Prediction) -> None:
        self.notify(prediction, prediction.tick())

    def notify(self, prediction: m.Prediction, events: list[str]) -> None:
        """Send one webhook for these events if the prediction asked for any of them."""
        wanted = [e for e in events if e in prediction.events]
        if prediction.webhook and wanted:
            body = json.dumps(prediction.to_json(self.base_url))
            self.fake.outbox.send(prediction.webhook, wanted[-1], body)


def create_app(settings: FakeSettings | None = None) -> FastAPI:
    """Build the Replicate predictions fake (settings from `JOBGATE_FAKE_*` when not given)."""
    state = ReplicateFake(settings or FakeSettings())
    fake, errors = state.fake, state.errors
    predictions = state.predictions
    app = fake_app(
        "Replicate predictions fake", fake, advance=predictions.advance, reset=predictions.clear
    )

    def require_token(request: Request) -> None:
        state.base_url = str(request.base_url).rstrip("/")
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme not in ("Bearer", "Token") or not token:
            raise errors.error(401, "You did not pass an authentication token")
        if not hmac.compare_digest(token.encode(), fake.settings.api_key.encode()):
            raise errors.error(401, "You did not pass a valid authentication token")

    v1 = APIRouter(prefix="/v1", dependencies=[Depends(require_token)])

    @v1.post("/predictions")
    async def create(request: Request) -> Response:
        body = await json_object(request, errors)
        known = str(body.get("version", "")).rpartition(":")[2] == m.VERSION  # "owner/name:id" too
        return await _create(request, body, known=known)

    @v1.post("/models/{owner}/{name}/predictions")
    async def create_for_model(owner: str, name: str, request: Request) -> Response:
        if f"{owner}/{name}" != m.MODEL:
            raise errors.error(404, "Not found.")
        return await _create(request, await json_object(request, errors), known=True)

    async def _create(request: Request, body: dict[str, Any], *, known: bool) -> Response:
        webhook = body.get("webhook")
        refs = [webhook] if isinstance(webhook, str) else []
        fake.stats.create_call(refs)
        if not known:
            raise FakeError(
                422,
                {
                    "title": "Invalid version or not permitted",
                    "detail": "The specified version does not exist (or perhaps you don't "
                    "have permission to use it?)",
                    "status": 422,
                },
            )
        problems = m.input_problems(body.get("input"))
        if problems:
            detail = "".join(f"- {p['field']}: {p['description']}\n" for p in problems)
            raise errors.error(422, detail, invalid_fields=problems)
        events = body.get("webhook_events_filter")
        if events is not None and (not isinstance(events, list) or not set(events) <= m.EVENTS):
            raise errors.error(
                422, f"- webhook_events_filter: must be a subset of {sorted(m.EVENTS)}\n"
            )
        wait = _prefer_wait(request.headers.get("prefer"))
        deadline = _cancel_after(request.headers.get("cancel-after"))

        def effect() -> Response:
            prediction = m.Prediction(
                m.new_id(),
                dict(body["input"]),
                webhook if isinstance(webhook, str) else None,
                frozenset(events) if events is not None else m.DEFAULT_EVENTS,
                deadline,
                bool(body.get("stream")),
            )
            predictions.add(prediction.id, prediction)
            fake.stats.job_created(prediction.id, refs)
            state.notify(prediction, ["start"])
            for _ in range(wait):  # sync mode: the request holds while the clock runs
                if prediction.status in m.TERMINAL:
                    break
                state.tick(prediction)
            return JSONResponse(prediction.to_json(state.base_url), status_code=201)

        return await fake.guarded("create", effect)

    def _prefer_wait(prefer: str | None) -> int:
        if not prefer:
            return 0
        value = prefer.strip()
        if value == "wait":
            return MAX_WAIT
        seconds = value.removeprefix("wait=")
        if value.startswith("wait=") and seconds.isdigit() and 1 <= int(seconds) <= MAX_WAIT:
            return int(seconds)
        raise errors.error(400, f"Prefer: expected 'wait' or 'wait=n' with n from 1 to {MAX_WAIT}")

    def _cancel_after(value: str | None) -> int | None:
        if value is None:
            return None
        seconds = m.parse_duration(value)
        if seconds is None or seconds < 1:
            raise errors.error(400, "Cancel-After: expected a duration such as 30s, 5m or 1h30m")
        return seconds

    @v1.get("/predictions/{prediction_id}")
    async def get(prediction_id: str) -> Response:
        prediction = predictions.get(prediction_id)

        def effect() -> Response:
            state.tick(prediction)
            return JSONResponse(prediction.to_json(state.base_url))

        return await fake.job_call(prediction_id, "get", effect)

    @v1.post("/predictions/{prediction_id}/cancel")
    async def cancel(prediction_id: str) -> Response:
        prediction = predictions.get(prediction_id)

        def effect() -> Response:
            state.notify(prediction, prediction.cancel())
            return JSONResponse(prediction.to_json(state.base_url))

        return await fake.job_call(prediction_id, "cancel", effect)

    @v1.get("/predictions/{prediction_id}/stream")
    async def stream(prediction_id: str) -> Response:
        prediction = predictions.get(prediction_id)
        chunks = [
            f"event: output\nid: {i}\ndata: {w}\n\n" for i, w in enumerate(prediction.output or [])
        ]
        if prediction.status in m.TERMINAL:
            chunks.append("event: done\ndata: {}\n\n")
        return Response("".join(chunks), media_type="text/event-stream")

    @v1.get("/predictions")
    async def list_predictions(request: Request, cursor: str | None = None) -> Response:
        fake.stats.list_call()
        newest_first = predictions.newest_first()
        size = fake.settings.page_size
        try:
            start = int(base64.urlsafe_b64decode(cursor.encode()).decode()) if cursor else 0
        except ValueError as exc:
            raise errors.error(400, "Invalid cursor") from exc

        def link(offset: int) -> str:
            token = base64.urlsafe_b64encode(str(offset).encode()).decode()
            return f"{state.base_url}/v1/predictions?cursor={token}"

        def effect() -> Response:
            page = newest_first[start : start + size]
            return JSONResponse(
                {
                    "next": link(start + size) if start + size < len(newest_first) else None,
                    "previous": link(max(0, start - size)) if start > 0 else None,
                    "results": [p.to_json(state.base_url) for p in page],
                }
            )

        return await fake.guarded("list", effect)

    @v1.get("/webhooks/default/secret")
    async def webhook_secret() -> Response:
        fake.stats.op_call("webhook_secret")
        return await fake.guarded(
            "webhook_secret", lambda: JSONResponse({"key": fake.outbox.secret})
        )

    app.include_router(v1)
    return app
