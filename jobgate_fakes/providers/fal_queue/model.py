"""Requests to the fake's image app, driven by a per-request clock.

One status read (or one `POST /_fake/advance` step) is one second of the request's life.
fal apps define their own arguments; the fake's app takes:

| argument | default | meaning |
| --- | --- | --- |
| `prompt` | required | a text; a request without one fails its run with 422 (see below) |
| `num_images` | 1 | images made (1 to 4) |
| `queue_seconds` | 0 | seconds `IN_QUEUE` after the submit |
| `run_seconds` | 1 | seconds `IN_PROGRESS` |
| `crash` | false | the app raises at the end: `COMPLETED` with `error`, result read 500 |
| `ignore_cancel` | false | the app ignores the cancel signal and runs to the end |

Each word `nsfw` in the prompt flags one image (the last ones first) in
`has_nsfw_concepts`; a flagged image is black, as fal's toolkit makes it. The queue
takes any body: arguments are checked when the app runs, so a missing `prompt` is found
after the run: the status reads `COMPLETED` (no `error`) and the result read answers 422
with FieldException's `detail`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

CANCELLED = "Request cancelled by the client."
CANCELLED_TYPE = "request_cancelled"
CRASHED = "Internal error in the app: the model raised while running."
MAX_IMAGES = 4


def _int(arguments: dict[str, Any], name: str, default: int) -> int:
    value = arguments.get(name, default)
    return (
        value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default
    )


@dataclass
class Request:
    """One queued request and its clock (`seconds`)."""

    app: str  # <owner>/<alias>, as the URLs carry it
    arguments: dict[str, Any]
    id: str = field(default_factory=lambda: secrets.token_hex(16))
    seconds: int = 0
    status: str = "IN_QUEUE"
    cancel_asked: bool = False
    cancelled: bool = False
    logs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def queue(self) -> int:
        return _int(self.arguments, "queue_seconds", 0)

    @property
    def run(self) -> int:
        return max(1, _int(self.arguments, "run_seconds", 1))

    def tick(self) -> None:
        """One second passes."""
        if self.status == "COMPLETED":
            return
        self.seconds += 1
        if self.cancel_asked and not self.arguments.get("ignore_cancel"):
            self.status, self.cancelled = "COMPLETED", True
            return
        if self.seconds <= self.queue:
            return
        if self.seconds <= self.queue + self.run:
            self.status = "IN_PROGRESS"
            self.logs.append({"message": f"step {self.seconds - self.queue}", "level": "INFO"})
            return
        self.status = "COMPLETED"

    def cancel(self) -> bool:
        """Ask to cancel: False when the request is already done (ALREADY_COMPLETED)."""
        if self.status == "COMPLETED":
            return False
        self.cancel_asked = True
        if self.status == "IN_QUEUE":  # never started: taken off the queue at once
            self.status, self.cancelled = "COMPLETED", True
        return True

    @property
    def problem(self) -> dict[str, Any] | None:
        """The FieldException detail of arguments the app refuses (found when it runs)."""
        prompt = self.arguments.get("prompt")
        if not isinstance(prompt, str) or not prompt:
            return {
                "loc": ["body", "prompt"],
                "msg": "field required",
                "type": "value_error.missing",
            }
        count = self.arguments.get("num_images", 1)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_IMAGES:
            return {"loc": ["body", "num_images"],
                    "msg": f"ensure this value is between 1 and {MAX_IMAGES}",
                    "type": "value_error.number"}  # fmt: skip
        return None

    @property
    def error(self) -> tuple[str, str] | None:
        """The status answer's (error, error_type) of a request whose app failed."""
        if self.status != "COMPLETED":
            return None
        if self.cancelled:
            return CANCELLED, CANCELLED_TYPE
        if self.arguments.get("crash") and self.problem is None:
            return CRASHED, "internal_error"
        return None

    def status_json(self, base: str, logs: bool) -> dict[str, Any]:
        """The status answer, as `GET status_url` gives it."""
        urls = self.urls(base)
        out: dict[str, Any] = {"status": self.status, "request_id": self.id,
                               "response_url": urls["response_url"]}  # fmt: skip
        if self.status == "IN_QUEUE":
            out["queue_position"] = 0
        else:
            out["logs"] = list(self.logs) if logs else None
        if self.status == "COMPLETED":
            out["metrics"] = {"inference_time": float(self.run)}
            if self.error is not None:
                out["error"], out["error_type"] = self.error
        return out

    def urls(self, base: str) -> dict[str, str]:
        root = f"{base}/{self.app}/requests/{self.id}"
        return {
            "response_url": root,
            "status_url": f"{root}/status",
            "cancel_url": f"{root}/cancel",
        }

    def output(self) -> dict[str, Any]:
        """The app's answer: images, one `has_nsfw_concepts` flag each."""
        count = int(self.arguments.get("num_images", 1))
        prompt = str(self.arguments["prompt"])
        flagged = min(count, prompt.lower().split().count("nsfw"))
        images = []
        for i in range(count):
            black = i >= count - flagged
            name = f"{self.id[:8]}-{i}{'-black' if black else ''}.jpeg"
            images.append({"url": f"https://v3.fal.media/files/fake/{name}", "width": 1024,
                           "height": 768, "content_type": "image/jpeg"})  # fmt: skip
        return {
            "images": images,
            "timings": {"inference": float(self.run)},
            "seed": 42,
            "has_nsfw_concepts": [i >= count - flagged for i in range(count)],
            "prompt": prompt,
        }
