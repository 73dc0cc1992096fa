"""The `fal_queue` profile's adapter: what a fal app's result says about its images.

fal's safety checker flags each image in `has_nsfw_concepts` (one boolean per image, in
order) and replaces a flagged image with a black one: the request is `COMPLETED`, the
flagged image is in `images` all the same. YAML cannot pair two arrays, so this adapter
does: each image is an item, a flagged one failed (listed at `/errors` as
`images/<index>`), and the result keeps only the images that were not flagged. A result
without both arrays (a video or audio app) is one item that succeeded. References (read
2026-12-06): github.com/fal-ai/fal at c6f0afaa, `projects/fal/src/fal/toolkit/image/`
(`filter_by`, `safety_checker.py`).
"""

from __future__ import annotations

from typing import Any

from app.providers.language.adapter import Adapter
from app.providers.language.counts import Counts

FLAGGED = (
    "flagged by fal's safety checker (has_nsfw_concepts); fal replaced the image with a black one"
)


def images(document: Any) -> tuple[list[Any], list[bool]] | None:
    """(images, their flags) when the result pairs them, else None."""
    if not isinstance(document, dict):
        return None
    found, flags = document.get("images"), document.get("has_nsfw_concepts")
    if not isinstance(found, list) or not isinstance(flags, list) or len(flags) != len(found):
        return None
    return found, [flag is True for flag in flags]


class FalQueue(Adapter):
    def count(self, answer: Any) -> Counts | None:
        paired = images(answer)
        if paired is None:
            return Counts(1, 1, 0, 0) if isinstance(answer, dict) else None
        found, flags = paired
        return Counts(len(found), flags.count(False), flags.count(True), 0)

    def result(self, document: Any) -> Any:
        paired = images(document)
        if paired is None:
            return document if isinstance(document, dict) else None
        found, flags = paired
        kept = [image for image, flag in zip(found, flags, strict=True) if not flag]
        rest = {k: v for k, v in document.items() if k != "has_nsfw_concepts"}
        return {**rest, "images": kept}

    def failed_items(self, document: Any) -> list[dict[str, Any]] | None:
        paired = images(document)
        if paired is None:
            return None
        _, flags = paired
        return [
            {"id": f"images/{i}", "status": "NSFW", "error": {"message": FLAGGED}}
            for i, flag in enumerate(flags)
            if flag
        ]


ADAPTER = FalQueue()
