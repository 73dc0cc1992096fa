"""Timing and limits of a profile: polling, deadlines, timeouts, retry hints, result checks."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from app.providers.spec_base import Seconds, SpecModel


class PollingPolicy(SpecModel):
    """Capped exponential backoff; Retry-After and hints are clamped to [min, max]."""

    initial_seconds: Seconds = 2.0
    factor: Annotated[float, Field(ge=1)] = 2.0
    cap_seconds: Seconds = 60.0
    jitter: Literal["full", "none"] = "full"
    min_seconds: Annotated[float, Field(ge=0)] = 1.0
    max_seconds: Seconds = 600.0

    @model_validator(mode="after")
    def _bounds(self) -> PollingPolicy:
        if self.min_seconds > self.max_seconds:
            raise ValueError("min_seconds must not exceed max_seconds")
        return self


class Deadlines(SpecModel):
    create_seconds: Seconds = 300.0
    result_seconds: Seconds = 3600.0
    cancel_seconds: Seconds = 300.0


class Timeouts(SpecModel):
    connect: Seconds = 5.0
    read: Seconds = 30.0
    seconds: Seconds = 60.0  # wall-clock bound on one whole call


def _hint_pointer(value: str) -> str:
    # A JSON pointer where "*" stands for any element of an array.
    if value and not value.startswith("/"):
        raise ValueError("a JSON pointer must be empty or start with '/'")
    if re.search(r"~(?![01])", value):
        raise ValueError("'~' in a JSON pointer must be followed by '0' or '1'")
    return value


class RetryHint(SpecModel):
    """Where a provider that sends no ``Retry-After`` puts its own retry delay in an error
    answer (e.g. Google's ``google.rpc.RetryInfo``: ``/error/details/*/retryDelay``)."""

    pointer: Annotated[str, AfterValidator(_hint_pointer)]
    format: Literal["seconds", "duration"] = "seconds"  # duration: "7s", "1.5s"


class ValidationDefaults(SpecModel):
    checksum: Literal["none", "sha256_rfc8785"] = "none"
    max_bytes: Annotated[int, Field(gt=0)] = 10 * 1024 * 1024
    content_type: str = "application/json"
