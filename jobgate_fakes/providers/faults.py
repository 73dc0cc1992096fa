"""Faults a test queues on a fake through `POST /_fake/faults`, outside the provider's API.

A fault names the operation it hits (each fake lists its own: `create`, `retrieve`,
`cancel`, `list`, `results`, ...) and is used by the next `times` calls of that
operation, then forgotten. Kinds:

- `rate_limit`: answer 429 (or `status`) with the provider's throttling body and a
  retry hint of `retry_after` seconds; nothing happens.
- `error_before`: answer a 5xx (`status`, default 503); nothing happens.
- `error_after`: do the work (a create makes its job, a cancel cancels), then answer
  a 5xx (`status`, default 500), as a provider whose answer failed after the effect.
- `drop`: do the work, then send half of the answer and cut the connection (the lost
  create response: the client sees a protocol error, the job exists).
- `delay`: do the work, then hold the answer `delay_ms` milliseconds (a slow provider,
  for read timeouts: the effect happened even if the client gave up).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field
from starlette.responses import Response

from jobgate_fakes.mock.app import DroppedResponse

FaultKind = Literal["rate_limit", "error_before", "error_after", "drop", "delay"]
# Builds the provider's own error answer for a fault: (HTTP status, the fault).
ErrorRenderer = Callable[[int, "Fault"], Response]


class Fault(BaseModel):
    """One queued fault (the body of `POST /_fake/faults`, or one item of its list)."""

    op: str
    kind: FaultKind
    times: int = Field(default=1, ge=1)
    status: int | None = Field(default=None, ge=400, le=599)
    retry_after: int = Field(default=1, ge=0)
    delay_ms: int = Field(default=0, ge=0, le=60_000)
    # Google's front end documents no Retry-After header (the hint is a RetryInfo
    # detail in the body); a test that wants one anyway says so here.
    retry_after_header: bool = False

    @property
    def refuses(self) -> bool:
        """Whether the call is answered without doing its work."""
        return self.kind in ("rate_limit", "error_before")

    def answer_status(self) -> int:
        """The HTTP status this fault answers with (for the kinds that answer an error)."""
        if self.status is not None:
            return self.status
        return {"rate_limit": 429, "error_before": 503}.get(self.kind, 500)


class FaultQueue:
    """Pending faults per operation, first queued first used."""

    def __init__(self, ops: Iterable[str]) -> None:
        self.ops = frozenset(ops)
        self._pending: list[Fault] = []

    def add(self, faults: Iterable[Fault]) -> None:
        """Queue faults; an operation the fake does not have is refused (ValueError)."""
        faults = list(faults)
        unknown = sorted({f.op for f in faults} - self.ops)
        if unknown:
            raise ValueError(f"unknown op {unknown}; this fake has {sorted(self.ops)}")
        self._pending.extend(f.model_copy() for f in faults)

    def take(self, op: str) -> Fault | None:
        """The fault for this call of `op`, if one is queued (uses up one of its `times`)."""
        for i, fault in enumerate(self._pending):
            if fault.op == op:
                fault.times -= 1
                if fault.times == 0:
                    del self._pending[i]
                return fault
        return None

    def pending(self) -> list[dict[str, Any]]:
        """What is still queued, for `GET /_fake/faults`."""
        return [f.model_dump() for f in self._pending]

    def clear(self) -> None:
        """Forget every queued fault."""
        self._pending.clear()


class _DroppedBytes(DroppedResponse):
    """The mock provider's half-sent answer, for a body that is already bytes."""

    def render(self, content: Any) -> bytes:
        return content if isinstance(content, bytes) else super().render(content)


def dropped(response: Response) -> Response:
    """`response`, cut off halfway: headers and half the body, then a dropped connection."""
    headers = {k: v for k, v in response.headers.items() if k != "content-length"}
    return _DroppedBytes(response.body, status_code=response.status_code, headers=headers)


async def after_effect(fault: Fault | None, response: Response, render: ErrorRenderer) -> Response:
    """What the client gets once the work is done: the answer, or what `fault` makes of it."""
    if fault is None or fault.refuses:
        return response
    if fault.kind == "error_after":
        return render(fault.answer_status(), fault)
    if fault.kind == "drop":
        return dropped(response)
    await asyncio.sleep(fault.delay_ms / 1000)  # "delay": the answer is late, not lost
    return response
