"""Timing and limits of a profile: polling, deadlines, timeouts, retry hints, result checks."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, WithJsonSchema, model_validator

from app.providers.language.spec_base import Seconds, SpecModel


class PollingPolicy(SpecModel):
    """Capped exponential backoff between status reads. The delay before the next read is
    the provider's ``Retry-After`` when it sends one, else its ``retry_hint``, else the
    answer's ``pointers.poll_hint``, else the backoff; each is clamped to
    [``min_seconds``, ``max_seconds``]."""

    initial_seconds: Seconds = 2.0
    """The first delay."""
    factor: Annotated[float, Field(ge=1)] = 2.0
    """Growth per poll."""
    cap_seconds: Seconds = 60.0
    """The largest computed delay."""
    jitter: Literal["full", "none"] = "full"
    """``full``: uniform in [0, delay]; ``none``: the delay as computed."""
    min_seconds: Annotated[float, Field(ge=0)] = 1.0
    """The shortest delay, ``Retry-After`` and hints included."""
    max_seconds: Seconds = 600.0
    """The longest delay, ``Retry-After`` and hints included."""

    @model_validator(mode="after")
    def _bounds(self) -> PollingPolicy:
        if self.min_seconds > self.max_seconds:
            raise ValueError("min_seconds must not exceed max_seconds")
        return self


class Deadlines(SpecModel):
    """Default deadlines of an operation; an agent may ask for others."""

    create_seconds: Seconds = 300.0
    """How long a create may take to be confirmed."""
    result_seconds: Seconds = 3600.0
    """How long the job may take to a collected result."""
    cancel_seconds: Seconds = 300.0
    """How long a cancel may take to be confirmed."""


class Timeouts(SpecModel):
    """Timeouts of every call to the provider."""

    connect: Seconds = 5.0
    """Connecting."""
    read: Seconds = 30.0
    """Waiting for each read."""
    seconds: Seconds = 60.0
    """The wall-clock bound on one whole call."""


def _hint_pointer(value: str) -> str:
    # A JSON pointer where "*" stands for any element of an array.
    if value and not value.startswith("/"):
        raise ValueError("a JSON pointer must be empty or start with '/'")
    if re.search(r"~(?![01])", value):
        raise ValueError("'~' in a JSON pointer must be followed by '0' or '1'")
    return value


# The one pointer that reads "any element": its schema allows a `*` segment.
_ANY_POINTER = {"type": "string", "format": "json-pointer", "pattern": r"^(/([^~/]|~[01])*)*$"}


class RetryHint(SpecModel):
    """Where a provider that sends no ``Retry-After`` puts its own retry delay in an error
    answer (e.g. Google's ``google.rpc.RetryInfo``: ``/error/details/*/retryDelay``).
    ``Retry-After`` wins, then this hint, then ``pointers.poll_hint``, then the backoff."""

    pointer: Annotated[str, AfterValidator(_hint_pointer), WithJsonSchema(_ANY_POINTER)] = Field(
        examples=["/error/details/*/retryDelay"]
    )
    """Where an error answer keeps the delay; a ``*`` segment matches any array element
    (the first where the rest resolves). The only pointer that may hold a ``*``."""
    format: Literal["seconds", "duration"] = "seconds"
    """``seconds``: a number; ``duration``: text such as ``"7s"`` or ``"1.5s"``."""


class ValidationDefaults(SpecModel):
    """Checks of every result before it is stored."""

    checksum: Literal["none", "sha256_rfc8785"] = "none"
    """``sha256_rfc8785``: the result must match the sha256 the provider claims
    (``pointers.result.sha256``), over its RFC 8785 canonical JSON."""
    max_bytes: Annotated[int, Field(gt=0)] = 10 * 1024 * 1024
    """The largest result (and the largest answer read, plus 64 KiB)."""
    content_type: str = "application/json"
    """Informative."""
