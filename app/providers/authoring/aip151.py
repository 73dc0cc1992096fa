"""Google's long-running operations (AIP-151), as an adapter base every Google profile with
an adapter builds on.

An operation is `{name, metadata, done, error | response}`: `done` is the truth (absent
while it runs, proto3 JSON leaves `false` out), a `google.rpc.Status` in `error` ends it
(code 1, CANCELLED, is a cancellation), and `response` is the method's own answer.
References: https://google.aip.dev/151, googleapis `google/longrunning/operations.proto`
and `google/rpc/code.proto` (read 2026-12-03, at f8291d2b). docs/profiles.md ("Google
long-running operations") shows a third Google API added on top of it.
"""

from __future__ import annotations

from typing import Any

from app.providers.language.adapter import Adapter
from app.providers.language.counts import Counts
from app.providers.language.words import RemoteClass

CANCELLED = 1  # google.rpc.Code.CANCELLED


def code_of(status: Any) -> int:
    """A `google.rpc.Status`'s code; proto3 JSON leaves 0 (OK) out."""
    code = status.get("code", 0) if isinstance(status, dict) else 0
    return code if isinstance(code, int) and not isinstance(code, bool) else -1


def done(answer: Any) -> bool:
    return isinstance(answer, dict) and answer.get("done") is True


class LongRunningOperation(Adapter):
    """Classifies an operation by `done`, `error` and `response`; counts nothing itself."""

    def classify(self, answer: Any, counts: Counts | None) -> RemoteClass | None:
        if not isinstance(answer, dict):
            return None
        if not done(answer):
            return RemoteClass.RUNNING
        error = answer.get("error")
        if isinstance(error, dict) and error:
            return RemoteClass.CANCELLED if code_of(error) == CANCELLED else RemoteClass.FAILED
        if "response" in answer:
            return RemoteClass.SUCCEEDED
        return None  # done with neither: not a status answer (the read is retried)
