"""The request side of a profile: create (with its preparation steps), cancel, the token,
the client reference, profile variables and the origins credentials may go to."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, field_validator, model_validator

from app.providers.expressions import pointers
from app.providers.language.secrets import EnvName, HeaderName
from app.providers.language.spec_base import (
    Endpoint,
    Method,
    Name,
    Pointer,
    SpecModel,
    Template,
    TemplateText,
    UrlPath,
)


def _regex(value: str) -> str:
    try:
        compiled = re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from None
    if compiled.groups != 1:
        raise ValueError("the pattern needs exactly one group: the part to keep")
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


class ValueSource(SpecModel):
    """A value read from a provider's answer: a body pointer, or a header, optionally cut
    down by a regular expression with one group (an id inside an ``Operation-Location``)."""

    pointer: Pointer | None = Field(None, examples=["/urls/get"])
    """Where the value is in the answer's body."""
    header: HeaderName | None = Field(None, examples=["Operation-Location"])
    """The answer's header holding the value."""
    pattern: Annotated[str, AfterValidator(_regex)] | None = Field(
        None, examples=["/jobs/([^/?#]+)"]
    )
    """A regular expression with one group: the part of the value to keep."""

    @model_validator(mode="after")
    def _one(self) -> ValueSource:
        if (self.pointer is None) == (self.header is None):
            raise ValueError("give exactly one of pointer or header")
        return self


def _texts(value: str | list[str] | None) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


class NothingCreated(SpecModel):
    """A create answer the provider documents as proof that NO job was made (an overload
    or throttling refusal): its HTTP status and, when given, an error value in the JSON
    body at ``pointer`` (one of ``equals``) or a piece of the body's text (one of
    ``contains``, for a provider whose refusal is free text). The status alone is allowed
    only where the provider's own reference (or its client, retrying the create on that
    status) says so: a proxy or load balancer in front of the provider can answer any
    status too (docs/single-create.md, "Nothing was made")."""

    status: Annotated[int, Field(ge=400, le=599, examples=[529])]
    """The HTTP status of the refusal."""
    pointer: Pointer | None = Field(None, examples=["/error/type"])
    """Where the answer's JSON body keeps the error's kind (give ``equals`` with it)."""
    equals: str | Annotated[list[str], Field(min_length=1)] | None = Field(
        None, examples=["overloaded_error"]
    )
    """The value at ``pointer`` that proves it, or a list of them."""
    contains: str | Annotated[list[str], Field(min_length=1)] | None = Field(
        None, examples=["rate limit"]
    )
    """A piece of the body's text that proves it (any of a list), JSON or not; matched
    without regard to case."""

    @model_validator(mode="after")
    def _paired(self) -> NothingCreated:
        if (self.pointer is None) != (self.equals is None):
            raise ValueError("pointer and equals go together")
        if any(not text.strip() for text in _texts(self.contains)):
            raise ValueError("contains must not be empty text")
        return self

    @property
    def values(self) -> list[str]:
        return _texts(self.equals)

    def matches(self, status: int, body: Any, text: str | None = None) -> bool:
        """Whether an answer with this status, JSON body and text is this refusal."""
        if status != self.status:
            return False
        if self.pointer is not None and pointers.get(body, self.pointer) not in self.values:
            return False
        pieces = _texts(self.contains)
        return not pieces or any(p.lower() in (text or "").lower() for p in pieces)

    def describe(self) -> str:
        """The rule in words, as history and `jobgate profiles check` show it."""
        parts = [f"HTTP {self.status}"]
        if self.pointer is not None:
            parts.append(f"{self.pointer} = {' or '.join(self.values)}")
        if self.contains is not None:
            parts.append("a body containing " + " or ".join(repr(t) for t in _texts(self.contains)))
        return " with ".join(parts[:2]) + (f" and {parts[2]}" if len(parts) > 2 else "")


class IdempotencySpec(SpecModel):
    """Where the idempotency token goes on create: a header, a body pointer, a query
    parameter, or nowhere. Anything but ``none`` declares that the provider HONOURS the
    token (a second create with it starts no second job): only then is a create resent.

    ``nothing_created`` is the one way a profile lets a create go again to a provider
    that honours no token: list only answers the provider's own reference says start
    nothing (an overload or throttling refusal), matched by the HTTP status **and** an
    error value in the body, a piece of its text, or (where the provider's reference
    says so) the status alone (a status could come from a proxy in front of the
    provider). After such an answer, or a create that never reached the provider (a
    failure while connecting), the create is sent again after the backoff
    (``Retry-After`` wins) until the create deadline, then the operation ends ``failed``
    with nothing started. Every other answer keeps the create at most once
    (docs/single-create.md, "Nothing was made"). The bundled Anthropic profile lists
    ``{status: 529, pointer: /error/type, equals: overloaded_error}`` and
    ``{status: 429, pointer: /error/type, equals: rate_limit_error}``.

    ``single_create`` (shown to agents in ``guarantees.single_create``) is derived, never
    written: ``token`` when ``idempotency.location`` is not ``none``, else ``lookup`` when a
    ``lookup`` by ``client_reference`` exists, else ``none``.
    """

    location: Literal["header", "body", "query", "none"] = "header"
    """Where the token goes (the default when the section is given; a profile without it
    has ``none``): ``header`` (in `header`), ``body`` (at `pointer`), ``query`` (as `param`)."""
    header: HeaderName | None = Field(None, examples=["Idempotency-Key"])
    """The header, for ``location: header``."""
    pointer: Pointer | None = Field(None, examples=["/request_id"])
    """Where in the create body, for ``location: body``."""
    param: str | None = Field(None, examples=["requestId"])
    """The query parameter, for ``location: query``."""
    nothing_created: list[NothingCreated] = []
    """Create answers that prove no job was made (an overloaded or rate-limited refusal
    the provider documents as such): only such an answer, or a create that never left,
    lets the create be sent again, whatever ``location`` says (docs/single-create.md)."""

    def proves_nothing_created(
        self, status: int, body: Any, text: str | None = None
    ) -> NothingCreated | None:
        """The listed rule this create answer matches, if any."""
        return next((r for r in self.nothing_created if r.matches(status, body, text)), None)

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
    """``body`` or ``metadata`` (at `pointer`), ``header`` (in `header`), ``query`` (as
    `param`), or ``none``: the reference is not sent."""
    pointer: Pointer | None = Field(None, examples=["/metadata/jobgate_ref"])
    """Where in the create body (array indexes allowed, objects made on the way)."""
    header: HeaderName | None = Field(None, examples=["X-Client-Reference"])
    """The header, for ``location: header``."""
    param: str | None = Field(None, examples=["jobgate_ref"])
    """The query parameter, for ``location: query``."""
    format: TemplateText = Field(
        "{client_reference}", examples=["{webhook_url}?jobgate_ref={client_reference}"]
    )
    """The value written: a Template over ``client_reference`` and the variables; when a
    value it names is absent, the reference is left out."""

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

    filename: TemplateText = Field(examples=["jobgate-{client_reference}.jsonl"])
    """The file name sent with the part."""
    jsonl: TemplateText | None = Field(None, examples=["$input/requests"])
    """A whole-value placeholder giving an array: one JSON line per element."""
    text: TemplateText | None = Field(None, examples=["{input/text}"])
    """The file's text."""
    content_type: str = "application/jsonl"
    """The part's content type."""

    @model_validator(mode="after")
    def _content(self) -> MultipartFile:
        if (self.jsonl is None) == (self.text is None):
            raise ValueError("give exactly one of jsonl or text")
        return self


class BodyEndpoint(Endpoint):
    """An endpoint that sends a JSON body template or a multipart form."""

    method: Method = "POST"
    """The HTTP method."""
    body: Template = Field(None, examples=[{"requests": "$input/requests"}])
    """The JSON body: a Template (any JSON, placeholders in its strings). Absent: no body,
    but a create sends the operation's input as it is."""
    multipart: dict[str, TemplateText | MultipartFile] | None = Field(
        None, examples=[{"purpose": "batch", "file": {"filename": "in.jsonl", "jsonl": "$input"}}]
    )
    """A multipart form instead of `body`: text fields (Templates) and files."""

    @model_validator(mode="after")
    def _one_body(self) -> BodyEndpoint:
        if self.body is not None and self.multipart is not None:
            raise ValueError("give body or multipart, not both")
        return self

    def template_parts(self) -> dict[str, object]:
        parts = super().template_parts()
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

    name: Name = Field(examples=["upload"])
    """The step's name, shown by `jobgate profiles check` and in the history."""
    capture: Annotated[dict[Name, Pointer], Field(min_length=1, examples=[{"file_id": "/id"}])]
    """Names for values of the step's answer: placeholders of later steps and the create."""


class CreateEndpoint(BodyEndpoint):
    """The create call of one kind, and where its answer keeps what jobgate follows."""

    path: UrlPath = Field(
        examples=["/v3/projects/{project}/locations/{location}:batchTranslateText"]
    )
    """Where to call, after `base_url`: a Template over the create's names (see Templates)."""
    prepare: list[PrepareStep] = []
    """Calls made first, in order (upload a file, capture its ``/id``). A step that fails
    means the create was not sent: no job exists."""
    job_id: ValueSource | None = Field(
        None, examples=[{"header": "Operation-Location", "pattern": "/jobs/([^/?#]+)"}]
    )
    """Where the create answer keeps the job id, when not at ``pointers.job_id`` in its body."""
    status_url: ValueSource | None = Field(None, examples=[{"pointer": "/urls/get"}])
    """The URL to read the job at, from the create answer (a relative one is resolved)."""
    cancel_url: ValueSource | None = Field(None, examples=[{"pointer": "/urls/cancel"}])
    """The URL to cancel the job at, from the create answer."""


class KindSpec(SpecModel):
    """One kind of job the provider runs: how to create it, and a sample input."""

    create: CreateEndpoint
    """The create call."""
    example: Any = Field(None, examples=[{"audio_url": "https://example.com/a.mp3"}])
    """A sample input, which `jobgate profiles check` builds the requests from."""
    input_items: Pointer | None = Field(None, examples=["/requests"])
    """Where the input keeps its items (an array): their number is compared with the
    provider's item count before an operator's `accept_job` (docs/agent-api.md)."""


class CancelEndpoint(BodyEndpoint):
    """``body`` is a Template over ``job_id`` and ``reason``. A 2xx to a cancel means the
    provider accepted it, never that the job is cancelled: jobgate watches for the end."""

    idempotent: bool = False
    """May a second cancel be sent when the first one's answer was lost?"""


class OriginSpec(SpecModel):
    """Another origin the profile may be sent to (a URL read from a provider answer
    that points elsewhere). ``credentials: false`` sends nothing secret there."""

    url: Annotated[str, AfterValidator(check_origin)] = Field(
        examples=["https://files.example.com"]
    )
    """``scheme://host[:port]``, without a path."""
    credentials: bool = False
    """Whether calls there carry the credential and the profile-wide headers."""

    @field_validator("url")
    @classmethod
    def _bare(cls, url: str) -> str:
        if urlsplit(url).path not in ("", "/"):
            raise ValueError("an origin is scheme://host[:port], without a path")
        return url


class VarSpec(SpecModel):
    """A profile variable: deployment settings that are not secrets (a project id, the
    gateway's webhook URL), read from the environment when a request is built. Templates
    name it by its own name: ``vars: {project: {env: GOOGLE_CLOUD_PROJECT}}`` is
    ``{project}``."""

    env: EnvName | None = Field(None, examples=["GOOGLE_CLOUD_PROJECT"])
    """The environment variable to read (when set and not empty)."""
    default: str | None = Field(None, examples=["us-central1"])
    """The value when the variable is unset."""

    @model_validator(mode="after")
    def _some(self) -> VarSpec:
        if self.env is None and self.default is None:
            raise ValueError("give env, default or both")
        return self
