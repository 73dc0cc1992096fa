"""The building blocks every part of a provider profile shares: pointers, paths, endpoints."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from app.providers.expressions import pointers, templates
from app.providers.language.secrets import HeaderName


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


# The published schema (app.providers.authoring.schema) says the same as the validators where JSON
# Schema can, so an editor flags what the loader refuses: RFC 6901 segments (a `~` escapes
# only 0 or 1), no `*` segment where one value is read. `jobgate-template` is our own
# format name (JSON Schema ignores formats it does not know); the reference calls it Template.
POINTER_SCHEMA = {
    "type": "string",
    "format": "json-pointer",
    "pattern": r"^(/(?!\*(/|$))([^~/]|~[01])*)*$",
}
TEMPLATE_SCHEMA = {"type": "string", "format": "jobgate-template"}

Pointer = Annotated[str, AfterValidator(_pointer), WithJsonSchema(POINTER_SCHEMA)]
UrlPath = Annotated[str, AfterValidator(check_path), WithJsonSchema(TEMPLATE_SCHEMA)]
TemplateText = Annotated[str, AfterValidator(_template_text), WithJsonSchema(TEMPLATE_SCHEMA)]
Name = Annotated[str, AfterValidator(_name)]


def _template(value: Any) -> Any:
    templates.references(value)  # syntax; names are checked against the endpoint's context
    return value


Template = Annotated[Any, AfterValidator(_template)]  # any JSON, placeholders in its strings
Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
Seconds = Annotated[float, Field(gt=0)]


class SpecModel(BaseModel):
    """Profile parts are strict (unknown keys are errors) and immutable.

    The docstring under each field is its meaning in the published schema and in the
    field reference of docs/profiles.md, which app.providers.authoring.schema_doc renders from it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


def one_or_many(schema: dict[str, Any], field: str) -> None:
    """Let the list ``field`` of a model's JSON Schema also be written as one item, as
    the model's own before-validator accepts (``when: {pointer: ..., equals: ...}``)."""
    many = schema["properties"][field]
    kept = {k: many.pop(k) for k in ("title", "description", "default", "examples") if k in many}
    schema["properties"][field] = {**kept, "anyOf": [many, many["items"]]}


class Endpoint(SpecModel):
    """One HTTP endpoint: a method, a path template, and fixed headers and query parameters.

    Placeholders (``{job_id}``, ``{output_file_id}``, ``{project}``...) may appear in the
    path, header values and query values (see Templates). A header or query
    parameter whose value is absent is left out; a path that cannot be filled is a
    local refusal (nothing is sent).
    """

    method: Method = "GET"
    """The HTTP method."""
    path: UrlPath = Field(examples=["/v1/batches/{job_id}"])
    """Where to call, after `base_url`: a Template (query parameters go under `query`)."""
    headers: dict[HeaderName, TemplateText] = Field({}, examples=[{"Prefer": "wait=5"}])
    """Headers of this call (values are Templates; a header whose value is absent is left
    out)."""
    query: dict[str, TemplateText] = Field({}, examples=[{"api-version": "2023-04-01"}])
    """Query parameters of this call (values are Templates; absent ones are left out). Sent
    also when the call goes to a URL the provider gave (a create answer's status URL),
    unless that URL already carries the parameter."""
    body: Template = Field(None, examples=[{"operationName": "$job_id"}])
    """The JSON body: a Template (any JSON, placeholders in its strings). A status, result
    or lookup read by POST, PUT or PATCH needs one (``{}`` for an empty object); a GET
    or DELETE sends none."""

    def template_parts(self) -> dict[str, object]:
        """Field name -> template, for checking the placeholders they use."""
        return {"path": self.path, "headers": self.headers, "query": self.query, "body": self.body}
