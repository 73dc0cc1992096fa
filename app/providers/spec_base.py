"""The building blocks every part of a provider profile shares: pointers, paths, endpoints."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from app.providers import pointers


def _pointer(value: str) -> str:
    pointers.parse(value)  # raises PointerError (a ValueError) with a clear message
    return value


def _path(value: str) -> str:
    if not value.startswith("/"):
        raise ValueError("must start with '/'")
    if any(p != "job_id" for p in re.findall(r"\{([^}]*)\}", value)):
        raise ValueError("the only path placeholder is {job_id}")
    return value


Pointer = Annotated[str, AfterValidator(_pointer)]
UrlPath = Annotated[str, AfterValidator(_path)]
Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
Seconds = Annotated[float, Field(gt=0)]


class SpecModel(BaseModel):
    """Profile parts are strict (unknown keys are errors) and immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Endpoint(SpecModel):
    """One HTTP endpoint; ``{job_id}`` in the path is the remote job id."""

    method: Method = "GET"
    path: UrlPath
