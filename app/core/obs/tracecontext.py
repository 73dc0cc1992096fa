"""W3C Trace Context (`traceparent`) in and out, tied to jobgate's own trace id.

An agent that sends `traceparent` on create gets an operation whose trace id is its
trace: `tr_` + the 32 hex digits of the W3C trace-id. Every provider call then carries
a `traceparent` with that trace-id and a fresh span id, next to the profile's trace id
header, so the provider's side of the job joins the agent's trace. A malformed header
is ignored (the W3C rule: start a new trace), never an error.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

HEADER = "traceparent"
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")
_TRACE_ID = re.compile(r"^tr_([0-9a-f]{32})$")
SAMPLED = "01"  # outgoing flags: the agent's sampling flag is not stored (no column for it)


@dataclass(frozen=True)
class TraceParent:
    """A parsed, valid `traceparent` header."""

    version: str
    trace_id: str  # 32 lowercase hex digits, not all zero
    parent_id: str  # 16 lowercase hex digits, not all zero
    flags: str

    @property
    def jobgate_trace_id(self) -> str:
        return f"tr_{self.trace_id}"


def parse(value: str | None) -> TraceParent | None:
    """The header if it is valid W3C Trace Context (version 00 or a later one), else None."""
    if not value:
        return None
    m = _TRACEPARENT.match(value.strip())
    if m is None:
        return None
    version, trace_id, parent_id, flags, rest = m.groups()
    if version == "ff" or (version == "00" and rest):
        return None
    if trace_id == "0" * 32 or parent_id == "0" * 16:
        return None
    return TraceParent(version, trace_id, parent_id, flags)


def outgoing(trace_id: str) -> str | None:
    """The `traceparent` to send with a provider call for this operation's trace id; None
    for a trace id that is not W3C-shaped (made before trace ids were)."""
    m = _TRACE_ID.match(trace_id)
    if m is None:
        return None
    return f"00-{m.group(1)}-{secrets.token_hex(8)}-{SAMPLED}"
