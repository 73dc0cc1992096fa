"""The `google_document_ai` profile's adapter: Document AI `batchProcess` operations.

Document AI ends a batch `done: true` with `metadata.state: SUCCEEDED` even when some of
its documents failed; each document's own `google.rpc.Status` is in
`metadata.individualProcessStatuses[]` (a missing `code` is 0, OK). YAML cannot count the
entries of that array, so this adapter does: a document with code 0 succeeded, code 1
(CANCELLED) never ran, any other code failed. The result is the documents that succeeded
with where Document AI wrote each one (`outputGcsDestination`); the failed and cancelled
ones are listed at `/errors` with their status. Statuses are only given once the
operation is done. References (read 2026-12-03): googleapis at f8291d2b,
`google/cloud/documentai/v1/document_processor_service.proto` (BatchProcessMetadata,
IndividualProcessStatus) and
https://cloud.google.com/document-ai/docs/reference/rest/v1/projects.locations.processors/batchProcess
"""

from __future__ import annotations

from typing import Any

from app.providers.authoring.aip151 import CANCELLED, LongRunningOperation, code_of, done
from app.providers.language.counts import Counts

# google.rpc.Code names, for the failed items agents read at /errors.
CODE_NAMES = {
    1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED", 9: "FAILED_PRECONDITION",
    10: "ABORTED", 13: "INTERNAL", 14: "UNAVAILABLE",
}  # fmt: skip


def statuses(answer: Any) -> list[dict[str, Any]] | None:
    """Each document's status, once the operation is done (None before)."""
    if not done(answer):
        return None
    metadata = answer.get("metadata")
    found = metadata.get("individualProcessStatuses", []) if isinstance(metadata, dict) else []
    return [s for s in found if isinstance(s, dict)] if isinstance(found, list) else []


class DocumentAIBatch(LongRunningOperation):
    def count(self, answer: Any) -> Counts | None:
        found = statuses(answer)
        if found is None:
            return None
        codes = [code_of(s.get("status")) for s in found]
        ok, cancelled = codes.count(0), codes.count(CANCELLED)
        return Counts(len(codes), ok, len(codes) - ok - cancelled, cancelled)

    def result(self, document: Any) -> Any:
        found = statuses(document)
        if found is None:
            return None
        return [
            {"input": s.get("inputGcsSource"), "output": s.get("outputGcsDestination")}
            for s in found
            if code_of(s.get("status")) == 0
        ]

    def failed_items(self, document: Any) -> list[dict[str, Any]] | None:
        found = statuses(document)
        if found is None:
            return None
        items = []
        for s in found:
            code = code_of(s.get("status"))
            if code != 0:
                name = CODE_NAMES.get(code, str(code))
                items.append({"id": s.get("inputGcsSource"), "status": name, "error": s["status"]})
        return items


ADAPTER = DocumentAIBatch()
