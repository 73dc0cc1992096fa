"""The `vertex_veo` profile's adapter: Veo video generation on Vertex AI.

The operation ends `done: true` with a `response` even when the safety filter blanked
some or all of the samples asked for: `response.videos[]` holds the videos made,
`raiMediaFilteredCount` how many were filtered and `raiMediaFilteredReasons` why. YAML
cannot count an array, so this adapter does: each video made is an item that
succeeded, each filtered sample one that failed, listed at `/errors` with its reason
(Vertex gives filtered samples no id: they are `filtered_1`, `filtered_2`, ...). Every
sample filtered is `failed`, never a success with nothing in it. References (read
2026-12-06): github.com/googleapis/python-genai at 66807187 (`_operations_converters.py`,
`_GenerateVideosResponse_from_vertex`; `operations.py`, `fetchPredictOperation`).
"""

from __future__ import annotations

from typing import Any

from app.providers.authoring.aip151 import LongRunningOperation, done
from app.providers.language.counts import Counts
from app.providers.language.words import RemoteClass


def response_of(answer: Any) -> dict[str, Any] | None:
    """The GenerateVideoResponse of a finished operation (None while it runs, or failed)."""
    if not done(answer):
        return None
    found = answer.get("response")
    return found if isinstance(found, dict) else None


def videos(response: dict[str, Any]) -> list[dict[str, Any]]:
    found = response.get("videos")
    return [v for v in found if isinstance(v, dict)] if isinstance(found, list) else []


def filtered(response: dict[str, Any]) -> int:
    count = response.get("raiMediaFilteredCount", 0)  # proto3 JSON leaves 0 out
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


class VeoOperation(LongRunningOperation):
    def classify(self, answer: Any, counts: Counts | None) -> RemoteClass | None:
        found = super().classify(answer, counts)
        response = response_of(answer)
        if found is RemoteClass.SUCCEEDED and response is not None and not videos(response):
            return RemoteClass.FAILED  # nothing made: every sample filtered (or none at all)
        return found

    def count(self, answer: Any) -> Counts | None:
        response = response_of(answer)
        if response is None:
            return None
        made, blanked = len(videos(response)), filtered(response)
        return Counts(made + blanked, made, blanked, 0)

    def result(self, document: Any) -> Any:
        response = response_of(document)
        return None if response is None else videos(response)

    def failed_items(self, document: Any) -> list[dict[str, Any]] | None:
        response = response_of(document)
        if response is None:
            return None
        said = response.get("raiMediaFilteredReasons")
        reasons = [str(r) for r in said] if isinstance(said, list) else []
        items = []
        for i in range(filtered(response)):
            reason = reasons[i] if i < len(reasons) else "; ".join(reasons) or None
            error = {"message": reason} if reason else None
            items.append({"id": f"filtered_{i + 1}", "status": "FILTERED", "error": error})
        return items


ADAPTER = VeoOperation()
