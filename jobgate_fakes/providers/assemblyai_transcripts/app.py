"""The AssemblyAI transcripts fake over HTTP: submit (`POST /v2/transcript`) and read
(`GET /v2/transcript/{transcript_id}`).

As the reference shows (read 2026-12-03, see the package docstring):

- the API key goes raw in the `Authorization` header (no scheme); a missing or wrong
  one is a 401;
- errors are `{"error": "<message>"}`;
- a submit takes a JSON body with `audio_url` (required) and options, and answers the
  transcript object: `id`, `status`, `audio_url`, `text` (null until completed),
  `words`, `error`, and the options echoed;
- `status` is `queued`, `processing`, `completed` or `error`; an `error` transcript
  carries the reason in `error`. There is no cancel and no idempotency key.

Deterministic, never from wall time: a new transcript is `queued`; each read moves it
one step (`processing`, then `completed`). An `audio_url` containing `missing` ends in
`error` ("Download error, unable to download <url>"), as an unreachable audio URL
does. Faults for `create` and `get` come from the control API (`/_fake/faults`).
"""

from __future__ import annotations

import hmac
import itertools
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from jobgate_fakes.providers.base import Fake, FakeError, Jobs, fake_app, json_object, now, rfc3339
from jobgate_fakes.providers.faults import Fault
from jobgate_fakes.providers.settings import FakeSettings

OPS = ("create", "get")
TEXT = "Smoke from hundreds of wildfires in Canada is triggering air quality alerts."
# Options a submit may carry that the transcript echoes back (a few of the reference's).
ECHOED = ("speech_model", "language_code", "punctuate", "format_text", "webhook_url")


class AssemblyAIErrors:
    """`{"error": message}` bodies, as the reference shows them."""

    def error(self, status: int, message: str) -> FakeError:
        return FakeError(status, {"error": message})

    def throttled(self, fault: Fault) -> FakeError:
        return FakeError(
            fault.answer_status(),
            {"error": "Too Many Requests"},
            {"retry-after": str(fault.retry_after)},
        )


@dataclass
class Transcript:
    """One transcript and where it is in its lifecycle."""

    id: str
    audio_url: str
    options: dict[str, Any]
    created: str
    status: str = "queued"
    error: str | None = None
    reads: int = field(default=0)

    def tick(self) -> None:
        """One step on: queued -> processing -> completed (or error)."""
        if self.status == "queued":
            self.status = "processing"
        elif self.status == "processing":
            if "missing" in self.audio_url:
                self.status = "error"
                self.error = f"Download error, unable to download {self.audio_url}"
            else:
                self.status = "completed"

    def to_json(self) -> dict[str, Any]:
        done = self.status == "completed"
        words = [
            {"text": w, "start": 250 + 400 * i, "end": 600 + 400 * i, "confidence": 0.97}
            for i, w in enumerate(TEXT.split())
        ]
        return {
            "id": self.id,
            "status": self.status,
            "audio_url": self.audio_url,
            "text": TEXT if done else None,
            "words": words if done else None,
            "confidence": 0.97 if done else None,
            "audio_duration": 281 if done else None,
            "language_code": self.options.get("language_code", "en_us"),
            "error": self.error,
            "created": self.created,
            **{k: v for k, v in self.options.items() if k != "language_code"},
        }


def create_app(settings: FakeSettings | None = None) -> FastAPI:
    """Build the AssemblyAI transcripts fake (settings from `JOBGATE_FAKE_*` when not given)."""
    errors = AssemblyAIErrors()
    fake = Fake(settings or FakeSettings(), OPS, errors)
    missing = "Transcript lookup error, transcript id not found"
    transcripts: Jobs[Transcript] = Jobs(lambda _: errors.error(404, missing), Transcript.tick)
    numbers = itertools.count(1)
    app = fake_app(
        "AssemblyAI transcripts fake", fake, advance=transcripts.advance, reset=transcripts.clear
    )

    def require_key(request: Request) -> None:
        given = request.headers.get("authorization", "")
        if not given:
            raise errors.error(401, "Authentication error, API token missing/invalid")
        if not hmac.compare_digest(given.encode(), fake.settings.api_key.encode()):
            raise errors.error(401, "Authentication error, API token missing/invalid")

    v2 = APIRouter(prefix="/v2", dependencies=[Depends(require_key)])

    @v2.post("/transcript")
    async def submit(request: Request) -> Response:
        body = await json_object(request, errors)
        fake.stats.create_call([])
        audio_url = body.get("audio_url")
        if not isinstance(audio_url, str) or not audio_url:
            raise errors.error(400, "audio_url: field required")

        def effect() -> Response:
            n = next(numbers)
            transcript = Transcript(
                id=f"5551722-f677-48a6-9287-{n:012d}",
                audio_url=audio_url,
                options={k: body[k] for k in ECHOED if k in body},
                created=rfc3339(now()),
            )
            transcripts.add(transcript.id, transcript)
            fake.stats.job_created(transcript.id, [])
            return JSONResponse(transcript.to_json())

        return await fake.guarded("create", effect)

    @v2.get("/transcript/{transcript_id}")
    async def read(transcript_id: str) -> Response:
        transcript = transcripts.get(transcript_id)

        def effect() -> Response:
            transcript.tick()
            return JSONResponse(transcript.to_json())

        return await fake.job_call(transcript_id, "get", effect)

    app.include_router(v2)
    return app
