"""The building blocks every part of a provider profile shares: pointers, paths, endpoints."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from app.providers import pointers, templates
from app.providers.secrets import HeaderName


def _pointer(value: str) -> str:
    pointers.refuse_wildcard(value)  # raises PointerError (a ValueError) with a clear message
    return value


def check_path(value: str) -> str:
    """A path template: absolute, no query or fragment, placeholders well formed."""
    if not value.startswith("/"):
        raise ValueError("must start with '/'")
    if "?" in value or "#" in value:
        raise ValueError("put query parameters under query, not in the path")
    templates.references(value)  # syntax only; which names may appear is checked per endpoint
    return value


def _template_text(value: str) -> str:
    templates.references(value)
    return value


def _name(value: str) -> str:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", value):
        raise ValueError("must be lower case letters, digits and _ (starting with a letter)")
    return value


Pointer = Annotated[str, AfterValidator(_pointer)]
UrlPath = Annotated[str, AfterValidator(check_path)]
TemplateText = Annotated[str, AfterValidator(_template_text)]
Name = Annotated[str, AfterValidator(_name)]
Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
Seconds = Annotated[float, Field(gt=0)]


class SpecModel(BaseModel):
    """Profile parts are strict (unknown keys are errors) and immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Endpoint(SpecModel):
    """One HTTP endpoint: a method, a path template, and fixed headers and query parameters.

    Placeholders (``{job_id}``, ``{output_file_id}``, ``{project}``...) may appear in the
    path, header values and query values (app.providers.templates). A header or query
    parameter whose value is absent is left out; a path that cannot be filled is a
    local refusal (nothing is sent).
    """

    method: Method = "GET"
    path: UrlPath
    headers: dict[HeaderName, TemplateText] = {}
    query: dict[str, TemplateText] = {}

    def template_parts(self) -> dict[str, object]:
        """Field name -> template, for checking the placeholders they use."""
        return {"path": self.path, "headers": self.headers, "query": self.query}
