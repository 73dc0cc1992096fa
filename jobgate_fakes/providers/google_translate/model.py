"""Cloud Translation batch operations (google.longrunning.Operation) driven by status reads.

Behaviour comes from the documented request fields alone:

- Work: every (input file, target language) pair is one unit of 1,000 characters,
  and one status read (or `POST /_fake/advance` step) translates one pair. So a
  request with 2 input files and 3 target languages reads `done` on its 6th read.
- Failure: an input file whose object name (after the last `/`) starts with `fail`
  fails for every target language (its characters count as `failedCharacters`;
  files are all-or-nothing, as the reference says). If no pair was translated the
  operation ends with `error` (state FAILED), else with `response` (SUCCEEDED).
- Cancel: the operation is `CANCELLING` until the next read, then done with
  `error.code` 1 (CANCELLED) and the counts of what was translated before.

Bodies are proto3 JSON as Google's REST front end prints them: int64 as strings and
default values left out, so a running operation has no `done` field at all.
"""

from __future__ import annotations

import re
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jobgate_fakes.providers.base import now, rfc3339

CHARS_PER_PAIR = 1000
METADATA_TYPE = "type.googleapis.com/google.cloud.translation.v3.BatchTranslateMetadata"
RESPONSE_TYPE = "type.googleapis.com/google.cloud.translation.v3.BatchTranslateResponse"
STATES = ("RUNNING", "SUCCEEDED", "FAILED", "CANCELLING", "CANCELLED")
CODE_CANCELLED = 1
CODE_INVALID_ARGUMENT = 3
_LABEL = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
_LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")


def request_problem(body: dict[str, Any]) -> str | None:
    """Why Translation refuses this BatchTranslateTextRequest (INVALID_ARGUMENT), or None."""
    if not isinstance(body.get("sourceLanguageCode"), str):
        return "sourceLanguageCode is required."
    targets = body.get("targetLanguageCodes")
    if not isinstance(targets, list) or not 1 <= len(targets) <= 10:
        return "targetLanguageCodes must list 1 to 10 language codes."
    inputs = body.get("inputConfigs")
    if not isinstance(inputs, list) or not 1 <= len(inputs) <= 100:
        return "inputConfigs must list 1 to 100 inputs."
    for i, item in enumerate(inputs):
        uri = (item.get("gcsSource") or {}).get("inputUri") if isinstance(item, dict) else None
        if not isinstance(uri, str) or not uri.startswith("gs://"):
            return f"inputConfigs[{i}].gcsSource.inputUri must be a gs:// URI."
    prefix = output_prefix(body)
    if prefix is None or not prefix.startswith("gs://") or not prefix.endswith("/"):
        return "outputConfig.gcsDestination.outputUriPrefix must start with gs:// and end with /."
    labels = body.get("labels", {})
    if not isinstance(labels, dict):
        return "labels must be a map of strings."
    for key, value in labels.items():
        if not _LABEL.match(key) or not isinstance(value, str) or not _LABEL_VALUE.match(value):
            return f"Invalid label {key!r}: keys and values use lowercase letters, digits, _ and -."
    return None


def output_prefix(body: dict[str, Any]) -> str | None:
    """`outputConfig.gcsDestination.outputUriPrefix`, if given."""
    out = body.get("outputConfig")
    dest = out.get("gcsDestination") if isinstance(out, dict) else None
    prefix = dest.get("outputUriPrefix") if isinstance(dest, dict) else None
    return prefix if isinstance(prefix, str) else None


@dataclass
class Operation:
    """One batchTranslateText operation: its pairs and how many have been processed."""

    name: str
    pairs: list[bool]  # per (file, target) pair: True when it fails
    labels: dict[str, str]
    submit_time: datetime = field(default_factory=now)
    end_time: datetime | None = None
    state: str = "RUNNING"
    processed: int = 0

    @classmethod
    def start(cls, parent: str, body: dict[str, Any]) -> Operation:
        """A new operation for a request that passed `request_problem`."""
        files = [c["gcsSource"]["inputUri"] for c in body["inputConfigs"]]
        fails = [uri.rsplit("/", 1)[-1].startswith("fail") for uri in files]
        pairs = [f for f in fails for _ in body["targetLanguageCodes"]]
        op_id = f"{now():%Y%m%d}-{secrets.randbelow(10**12):012d}-{uuid.uuid4()}"
        return cls(f"{parent}/operations/{op_id}", pairs, dict(body.get("labels", {})))

    @property
    def done(self) -> bool:
        return self.state in ("SUCCEEDED", "FAILED", "CANCELLED")

    def counts(self) -> tuple[int, int, int]:
        """(translated, failed, total) characters so far."""
        seen = self.pairs[: self.processed]
        failed = sum(seen) * CHARS_PER_PAIR
        return (len(seen) * CHARS_PER_PAIR - failed, failed, len(self.pairs) * CHARS_PER_PAIR)

    def step(self) -> None:
        """One read's worth of work."""
        if self.done:
            return
        if self.state == "CANCELLING":
            self._end("CANCELLED")
            return
        self.processed += 1
        if self.processed >= len(self.pairs):
            self._end("SUCCEEDED" if self.counts()[0] > 0 else "FAILED")

    def cancel(self) -> None:
        """Ask for cancellation (best effort; a done operation stays as it is)."""
        if not self.done:
            self.state = "CANCELLING"

    def _end(self, state: str) -> None:
        self.state, self.end_time = state, now()

    def to_json(self) -> dict[str, Any]:
        """The Operation, in proto3 JSON (defaults omitted, int64 as strings)."""
        translated, failed, total = self.counts()
        metadata = _without_defaults(
            {
                "@type": METADATA_TYPE,
                "state": self.state,
                "translatedCharacters": str(translated),
                "failedCharacters": str(failed),
                "totalCharacters": str(total),
                "submitTime": rfc3339(self.submit_time),
            }
        )
        op: dict[str, Any] = {"name": self.name, "metadata": metadata}
        if not self.done:
            return op
        op["done"] = True
        if self.state == "CANCELLED":
            op["error"] = {"code": CODE_CANCELLED, "message": "Operation was cancelled."}
        elif self.state == "FAILED":
            op["error"] = {
                "code": CODE_INVALID_ARGUMENT,
                "message": "No text was translated; the errors files under the output "
                "prefix say why.",
            }
        else:
            assert self.end_time is not None
            op["response"] = _without_defaults(
                {
                    "@type": RESPONSE_TYPE,
                    "totalCharacters": str(total),
                    "translatedCharacters": str(translated),
                    "failedCharacters": str(failed),
                    "submitTime": rfc3339(self.submit_time),
                    "endTime": rfc3339(self.end_time),
                }
            )
        return op


def _without_defaults(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v not in ("0", "", None)}
