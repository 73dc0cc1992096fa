"""Veo operations (google.longrunning.Operation) driven by `fetchPredictOperation` reads.

Behaviour comes from the request alone:

- Time: one read (or one `POST /_fake/advance` step) is one second of rendering; an
  operation is done on the read after `parameters.durationSeconds` seconds (4 to 8,
  default 8, the Veo page's range). While it runs the answer is `{"name": ...}` only:
  proto3 JSON leaves `done: false` out.
- Samples: `parameters.sampleCount` videos (1 to 4, default 1). With `storageUri` each
  is written there (`gcsUri: <storageUri><operation id>/sample_<i>.mp4`); without, the
  bytes come inline (`bytesBase64Encoded`).
- The fake's safety filter: each word `unsafe` in the prompt filters one sample (the
  last ones first). Filtered samples are counted in `raiMediaFilteredCount` and each
  gets a reason in `raiMediaFilteredReasons` (the fake's own wording, with a support
  code as Vertex prints one). Every sample filtered: done with a `response` holding no
  `videos`, only the count and the reasons.
- Failure after running: a prompt containing the word `crash` ends done with `error`
  code 13 INTERNAL, no `response`.
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass
from typing import Any

from jobgate_fakes.providers.googleapis import CODE_INTERNAL

RESPONSE_TYPE = "type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse"
DEFAULT_SECONDS, MIN_SECONDS, MAX_SECONDS = 8, 4, 8
MAX_SAMPLES = 4
FILTER_WORD, CRASH_WORD = "unsafe", "crash"
FILTERED = (
    "Unable to generate 1 video. The prompt contains words that violate the usage "
    "guidelines. Try rephrasing the prompt. Support codes: 58061214"
)
INTERNAL = "Internal error encountered."


def problems(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, description) for each way the request does not fit predictLongRunning."""
    found: list[tuple[str, str]] = []
    instances = body.get("instances")
    if not isinstance(instances, list) or len(instances) != 1 or not isinstance(instances[0], dict):
        return [("instances", "instances must hold exactly one instance")]
    prompt = instances[0].get("prompt")
    if not isinstance(prompt, str) and "image" not in instances[0]:
        found.append(("instances[0].prompt", "a prompt or an image is required"))
    params = body.get("parameters", {})
    if not isinstance(params, dict):
        return [*found, ("parameters", "parameters must be an object")]
    count = params.get("sampleCount", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_SAMPLES:
        found.append(("parameters.sampleCount", f"sampleCount must be 1 to {MAX_SAMPLES}"))
    seconds = params.get("durationSeconds", DEFAULT_SECONDS)
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        found.append(("parameters.durationSeconds", "durationSeconds must be an integer"))
    elif not MIN_SECONDS <= seconds <= MAX_SECONDS:
        found.append(
            (
                "parameters.durationSeconds",
                f"durationSeconds must be {MIN_SECONDS} to {MAX_SECONDS}",
            )
        )
    uri = params.get("storageUri")
    if uri is not None and (not isinstance(uri, str) or not uri.startswith("gs://")):
        found.append(("parameters.storageUri", "storageUri must be a gs:// URI"))
    return found


@dataclass
class Operation:
    """One predictLongRunning operation and its clock (`seconds`)."""

    name: str
    prompt: str
    samples: int
    duration: int
    storage_uri: str | None
    seconds: int = 0
    done: bool = False

    @classmethod
    def start(cls, parent: str, body: dict[str, Any]) -> Operation:
        instance = body["instances"][0]
        params = body.get("parameters") or {}
        uri = params.get("storageUri")
        if isinstance(uri, str) and not uri.endswith("/"):
            uri += "/"
        return cls(
            name=f"{parent}/operations/{secrets.token_hex(8)}",
            prompt=str(instance.get("prompt") or ""),
            samples=int(params.get("sampleCount", 1)),
            duration=int(params.get("durationSeconds", DEFAULT_SECONDS)),
            storage_uri=uri,
        )

    @property
    def op_id(self) -> str:
        return self.name.rsplit("/", 1)[1]

    @property
    def filtered(self) -> int:
        return min(self.samples, self.prompt.lower().split().count(FILTER_WORD))

    def step(self) -> None:
        """One second passes."""
        if self.done:
            return
        self.seconds += 1
        if self.seconds > self.duration:
            self.done = True

    def _video(self, i: int) -> dict[str, Any]:
        if self.storage_uri is not None:
            return {
                "gcsUri": f"{self.storage_uri}{self.op_id}/sample_{i}.mp4",
                "mimeType": "video/mp4",
            }
        data = base64.b64encode(f"fake mp4 {self.op_id} {i}".encode()).decode()
        return {"bytesBase64Encoded": data, "mimeType": "video/mp4"}

    def to_json(self) -> dict[str, Any]:
        """The Operation as fetchPredictOperation answers it (proto3 JSON)."""
        if not self.done:
            return {"name": self.name}
        if CRASH_WORD in self.prompt.lower().split():
            return {"name": self.name, "done": True,
                    "error": {"code": CODE_INTERNAL, "message": INTERNAL}}  # fmt: skip
        response: dict[str, Any] = {"@type": RESPONSE_TYPE}
        made = self.samples - self.filtered
        if self.filtered:
            response["raiMediaFilteredCount"] = self.filtered
            response["raiMediaFilteredReasons"] = [FILTERED] * self.filtered
        if made:
            response["videos"] = [self._video(i) for i in range(made)]
        return {"name": self.name, "done": True, "response": response}
