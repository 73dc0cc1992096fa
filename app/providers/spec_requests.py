"""The request side of a profile: create (with its preparation steps), cancel, the token,
the client reference, profile variables and the origins credentials may go to."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, field_validator, model_validator

from app.providers import pointers, templates
from app.providers.secrets import EnvName, HeaderName
from app.providers.spec_base import Endpoint, Method, Name, Pointer, SpecModel, TemplateText


def _regex(value: str) -> str:
    try:
        compiled = re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from None
    if compiled.groups != 1:
        raise ValueError("the pattern needs exactly one group: the part to keep")
    return value


def _template(value: Any) -> Any:
    templates.references(value)  # syntax; names are checked against the endpoint's context
    return value


def check_origin(url: str) -> str:
    """An absolute http(s) URL without user info, query or fragment (credentials would
    leak into exchanges and logs through them)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an absolute http(s) URL")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError("must not carry user info, a query or a fragment")
    return url


Template = Annotated[Any, AfterValidator(_template)]


class ValueSource(SpecModel):
    """A value read from a provider's answer: a body pointer, or a header, optionally cut
    down by a regular expression with one group (an id inside an ``Operation-Location``)."""

    pointer: Pointer | None = None
    header: HeaderName | None = None
    pattern: Annotated[str, AfterValidator(_regex)] | None = None

    @model_validator(mode="after")
    def _one(self) -> ValueSource:
        if (self.pointer is None) == (self.header is None):
            raise ValueError("give exactly one of pointer or header")
        return self


class NothingCreated(SpecModel):
    """A create answer the provider documents as proof that NO job was made (an overload
    or throttling refusal): the HTTP status and an error value in the body at ``pointer``
    (one of ``equals``). Both must match: a status alone proves nothing, since a proxy or
    load balancer in front of the provider can answer it too
    (docs/single-create.md, "Nothing was made")."""

    status: Annotated[int, Field(ge=400, le=599)]
    pointer: Pointer
    equals: Annotated[list[str], Field(min_length=1)]

    @field_validator("equals", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def matches(self, status: int, body: Any) -> bool:
        """Whether an answer with this status and JSON body is this documented refusal."""
        return status == self.status and pointers.get(body, self.pointer) in self.equals

    def describe(self) -> str:
        """The rule in words, as history and `jobgate profiles check` show it."""
        return f"HTTP {self.status} with {self.pointer} = {' or '.join(self.equals)}"


class IdempotencySpec(SpecModel):
    """Where the idempotency token goes on create: a header, a body pointer, a query
    parameter, or nowhere. Anything but ``none`` declares that the provider HONOURS the
    token (a second create with it starts no second job): only then is a create resent.

    ``nothing_created`` lists the create answers that prove no job was made; only such
    an answer (or a create that never left) lets the create be sent again whatever the
    location (docs/single-create.md)."""

    location: Literal["header", "body", "query", "none"] = "header"
    header: HeaderName | None = None
    pointer: Pointer | None = None
    param: str | None = None  # location query: the parameter name
    nothing_created: list[NothingCreated] = []

    def proves_nothing_created(self, status: int, body: Any) -> NothingCreated | None:
        """The listed rule this create answer matches, if any."""
        return next((r for r in self.nothing_created if r.matches(status, body)), None)

    @model_validator(mode="after")
    def _target(self) -> IdempotencySpec:
        if self.location == "header" and self.header is None:
            raise ValueError("location header needs a header name")
        if self.location == "body" and not self.pointer:
            raise ValueError("location body needs a pointer")
        if self.location == "query" and not self.param:
            raise ValueError("location query needs a param")
        return self


class ClientReferenceSpec(SpecModel):
    """Where the operation id goes on create, so a person (or a lookup) can find the job.

    ``body`` / ``metadata``: at ``pointer`` in the create body (array indexes allowed,
    objects made on the way); ``header`` / ``query``: under that name. ``format`` is the
    value written, a template over ``client_reference`` and the profile variables (e.g.
    a webhook URL carrying the reference); absent values leave the reference out.
    """

    location: Literal["body", "metadata", "header", "query", "none"] = "none"
    pointer: Pointer | None = None
    header: HeaderName | None = None
    param: str | None = None
    format: TemplateText = "{client_reference}"

    @model_validator(mode="after")
    def _target(self) -> ClientReferenceSpec:
        needs = {"body": "pointer", "metadata": "pointer", "header": "header", "query": "param"}
        wanted = needs.get(self.location)
        if wanted is not None and not getattr(self, wanted):
            raise ValueError(f"location {self.location} needs a {wanted}")
        return self

    def where(self) -> str:
        """Where the reference rides, in words for a person searching by hand."""
        place = self.pointer or self.header or self.param or ""
        return f"{self.location} {place}".strip()


class MultipartFile(SpecModel):
    """A file part of a multipart body: JSON Lines made from an array, or a text template."""

    filename: TemplateText
    jsonl: TemplateText | None = None  # a whole-value placeholder giving an array
    text: TemplateText | None = None
    content_type: str = "application/jsonl"

    @model_validator(mode="after")
    def _content(self) -> MultipartFile:
        if (self.jsonl is None) == (self.text is None):
            raise ValueError("give exactly one of jsonl or text")
        return self


class BodyEndpoint(Endpoint):
    """An endpoint that sends a JSON body template or a multipart form."""

    method: Method = "POST"
    body: Template = None
    multipart: dict[str, TemplateText | MultipartFile] | None = None

    @model_validator(mode="after")
    def _one_body(self) -> BodyEndpoint:
        if self.body is not None and self.multipart is not None:
            raise ValueError("give body or multipart, not both")
        return self

    def template_parts(self) -> dict[str, object]:
        parts = super().template_parts()
        parts["body"] = self.body
        if self.multipart is not None:
            parts["multipart"] = {
                k: v if isinstance(v, str) else v.model_dump(exclude={"content_type"})
                for k, v in self.multipart.items()
            }
        return parts


class PrepareStep(BodyEndpoint):
    """A call made before the create (e.g. uploading an input file). Its ``capture``
    names values read from its answer, usable as placeholders in later steps and the
    create. It starts no job, so a failure means nothing was started."""

    name: Name
    capture: Annotated[dict[Name, Pointer], Field(min_length=1)]


class CreateEndpoint(BodyEndpoint):
    """The create call of one kind, and where its answer keeps what jobgate follows."""

    prepare: list[PrepareStep] = []
    job_id: ValueSource | None = None  # default: pointers.job_id in the answer body
    status_url: ValueSource | None = None  # e.g. header Operation-Location, /urls/get
    cancel_url: ValueSource | None = None  # e.g. /urls/cancel


class KindSpec(SpecModel):
    create: CreateEndpoint
    example: Any = None  # a sample input, shown by `jobgate profiles check`
    # Where the input keeps its items (an array): their number is compared with the
    # provider's item count before an operator's accept_job (docs/agent-api.md).
    input_items: Pointer | None = None


class CancelEndpoint(BodyEndpoint):
    idempotent: bool = False  # may a second cancel be sent safely?


class OriginSpec(SpecModel):
    """Another origin the profile may be sent to (a URL read from a provider answer
    that points elsewhere). ``credentials: false`` sends nothing secret there."""

    url: Annotated[str, AfterValidator(check_origin)]
    credentials: bool = False

    @field_validator("url")
    @classmethod
    def _bare(cls, url: str) -> str:
        if urlsplit(url).path not in ("", "/"):
            raise ValueError("an origin is scheme://host[:port], without a path")
        return url


class VarSpec(SpecModel):
    """A profile variable: deployment settings that are not secrets (a project id, the
    gateway's webhook URL), read from the environment when a request is built."""

    env: EnvName | None = None
    default: str | None = None

    @model_validator(mode="after")
    def _some(self) -> VarSpec:
        if self.env is None and self.default is None:
            raise ValueError("give env, default or both")
        return self
