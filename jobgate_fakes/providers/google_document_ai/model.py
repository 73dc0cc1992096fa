"""Document AI batchProcess operations (google.longrunning.Operation) driven by status reads.

Behaviour comes from the request alone:

- Time: an operation is made `WAITING` ("waiting for scheduling"); the first status
  read (or `POST /_fake/advance` step) starts it `RUNNING`; each later read processes
  the next `documents_per_read` documents (`JOBGATE_FAKE_DOCUMENTS_PER_READ`, default
  1), in input order. With N documents and the default, the operation is done on read
  N + 1.
- Failures, per document and never for the request: a `mimeType` outside the types
  Document AI reads (PDF, GIF, TIFF, JPEG, PNG, BMP, WebP, HTML) fails with code 3
  INVALID_ARGUMENT "Unsupported input file format."; an object whose name (after the
  last `/`) starts with `fail` fails with code 13 INTERNAL "Internal error
  encountered.". A failed document has no `outputGcsDestination`.
- End: when at least one document succeeded the operation is `SUCCEEDED` with a
  `response`, however many failed (a partial success reads as success; only the
  per-document statuses tell). When none did it is `FAILED` with `error` code 3
  "Failed to process all documents." (the message Google's client libraries raise).
- Cancel: `CANCELLING` until the next read, then `CANCELLED`, done with `error.code`
  1. The documents processed before keep their statuses; the others get code 1.

`individualProcessStatuses` appear once the operation is done: Document AI's LRO page
says "When the main LRO ends, the detailed status of each document LRO is provided."

Bodies are proto3 JSON as Google prints them: default values left out, so a running
operation has no `done`, and a document that succeeded has `"status": {}` (code 0).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jobgate_fakes.providers.base import now, rfc3339
from jobgate_fakes.providers.googleapis import CODE_CANCELLED, CODE_INTERNAL, CODE_INVALID_ARGUMENT

METADATA_TYPE = "type.googleapis.com/google.cloud.documentai.v1.BatchProcessMetadata"
RESPONSE_TYPE = "type.googleapis.com/google.cloud.documentai.v1.BatchProcessResponse"
STATES = ("WAITING", "RUNNING", "CANCELLING", "SUCCEEDED", "FAILED", "CANCELLED")
DONE_STATES = frozenset({"SUCCEEDED", "FAILED", "CANCELLED"})
# The types on Document AI's "Supported files" page (HTML: Layout Parser only).
SUPPORTED_MIME_TYPES = frozenset(
    {
        "application/pdf",
        "image/gif",
        "image/tiff",
        "image/jpeg",
        "image/png",
        "image/bmp",
        "image/webp",
        "text/html",
    }
)
FAIL_PREFIX = "fail"
UNSUPPORTED = "Unsupported input file format."
INTERNAL = "Internal error encountered."
ALL_FAILED = "Failed to process all documents."
CANCELLED = "Operation was cancelled."


def document_failure(uri: str, mime_type: str) -> tuple[int, str] | None:
    """(google.rpc code, message) when the processor fails this document, else None."""
    if mime_type not in SUPPORTED_MIME_TYPES:
        return CODE_INVALID_ARGUMENT, UNSUPPORTED
    if uri.rsplit("/", 1)[-1].startswith(FAIL_PREFIX):
        return CODE_INTERNAL, INTERNAL
    return None


@dataclass
class Document:
    """One input document and what processing it gives."""

    uri: str
    failure: tuple[int, str] | None


@dataclass
class Operation:
    """One batchProcess operation: its documents and how many have been processed."""

    name: str
    documents: list[Document]
    output_uri: str  # gcsOutputConfig.gcsUri without its trailing slash
    labels: dict[str, str]
    per_read: int = 1
    create_time: datetime = field(default_factory=now)
    update_time: datetime = field(default_factory=now)
    state: str = "WAITING"
    processed: int = 0

    @classmethod
    def start(
        cls,
        parent: str,
        documents: list[tuple[str, str]],
        output_uri: str,
        labels: dict[str, str],
        per_read: int,
    ) -> Operation:
        """A new operation under `parent` (`projects/{number}/locations/{location}`)."""
        op_id = str(10**18 + secrets.randbelow(9 * 10**18))  # numeric, as Document AI's are
        docs = [Document(uri, document_failure(uri, mime)) for uri, mime in documents]
        at = now()
        return cls(f"{parent}/operations/{op_id}", docs, output_uri, labels, per_read, at, at)

    @property
    def op_id(self) -> str:
        return self.name.rsplit("/", 1)[-1]

    @property
    def done(self) -> bool:
        return self.state in DONE_STATES

    def step(self) -> None:
        """One read's worth of time."""
        if self.done:
            return
        if self.state == "CANCELLING":
            self._move("CANCELLED")
        elif self.state == "WAITING":
            self._move("RUNNING")
        else:
            self.processed = min(len(self.documents), self.processed + self.per_read)
            self.update_time = now()
            if self.processed == len(self.documents):
                succeeded = any(d.failure is None for d in self.documents)
                self._move("SUCCEEDED" if succeeded else "FAILED")

    def cancel(self) -> None:
        """Ask for cancellation (best effort; a done operation stays as it is)."""
        if not self.done:
            self._move("CANCELLING")

    def _move(self, state: str) -> None:
        self.state, self.update_time = state, now()

    def individual_statuses(self) -> list[dict[str, Any]]:
        """Each document's IndividualProcessStatus, in input order (once done)."""
        out = []
        for i, doc in enumerate(self.documents):
            item: dict[str, Any] = {"inputGcsSource": doc.uri}
            if i >= self.processed:
                item["status"] = {"code": CODE_CANCELLED, "message": CANCELLED}
            elif doc.failure is not None:
                item["status"] = {"code": doc.failure[0], "message": doc.failure[1]}
            else:
                item["status"] = {}  # google.rpc.Code OK: every field at its default
                item["outputGcsDestination"] = f"{self.output_uri}/{self.op_id}/{i}"
                item["humanReviewStatus"] = {"state": "SKIPPED"}
            out.append(item)
        return out

    def to_json(self) -> dict[str, Any]:
        """The Operation, in proto3 JSON (defaults omitted, fields in proto order)."""
        metadata: dict[str, Any] = {"@type": METADATA_TYPE, "state": self.state}
        if self.state == "FAILED":
            metadata["stateMessage"] = ALL_FAILED
        metadata["createTime"] = rfc3339(self.create_time)
        metadata["updateTime"] = rfc3339(self.update_time)
        op: dict[str, Any] = {"name": self.name, "metadata": metadata}
        if not self.done:
            return op
        metadata["individualProcessStatuses"] = self.individual_statuses()
        op["done"] = True
        if self.state == "CANCELLED":
            op["error"] = {"code": CODE_CANCELLED, "message": CANCELLED}
        elif self.state == "FAILED":
            op["error"] = {"code": CODE_INVALID_ARGUMENT, "message": ALL_FAILED}
        else:
            op["response"] = {"@type": RESPONSE_TYPE}
        return op
