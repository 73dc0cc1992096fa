"""Declarative provider profiles (language v2): the top-level schema and its cross-field checks.

A profile describes a provider's HTTP contract (requests, what its answers mean,
result documents, timing, webhooks) so that adding a provider is a YAML file, not
code. Its parts live beside it: requests (spec_requests), state rules (spec_states),
results (spec_results), counts, policies and webhooks. Credentials are references
resolved at call time and never stored on the profile (docs/security.md, "Secrets").
Files are read by `loader.py`. The reference is docs/profiles.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, PrivateAttr, model_validator

from app.providers.expressions import templates
from app.providers.language import adapter as adapters
from app.providers.language.counts import CountsSpec
from app.providers.language.secrets import Credential, CredentialSpec, EnvName, HeaderName, Secret
from app.providers.language.secrets import (
    CredentialError as CredentialError,  # re-exported for callers
)
from app.providers.language.spec_base import Endpoint as Endpoint  # re-exported for the client
from app.providers.language.spec_base import Name, Pointer, SpecModel, TemplateText
from app.providers.language.spec_lookup import (
    LookupEndpoint,  # re-exported
    ManualSearch,
)
from app.providers.language.spec_policies import Deadlines, RetryHint, Timeouts, ValidationDefaults
from app.providers.language.spec_policies import PollingPolicy as PollingPolicy  # re-exported
from app.providers.language.spec_requests import (
    CancelEndpoint,
    ClientReferenceSpec,
    IdempotencySpec,
    KindSpec,
    OriginSpec,
    VarSpec,
    check_origin,
)
from app.providers.language.spec_results import FieldMap, ResultPointers, ResultSpec
from app.providers.language.spec_states import StateRule
from app.providers.language.spec_webhooks import WebhookSpec as WebhookSpec  # re-exported
from app.providers.language.words import RemoteClass, SingleCreate

VERSION = 2


def _check_base_url(url: str) -> str:
    return check_origin(url)  # a path is allowed (https://host/v2); credentials in it are not


class Pointers(SpecModel):
    """Where create and status answers keep the job id, the state and the rest."""

    job_id: Pointer = Field(examples=["/id"])
    """The job id in create and status answers."""
    state: Pointer | None = Field(None, examples=["/status"])
    """The provider's own word for the state (shown as ``remote_state``), looked up in
    ``states``. Give this, ``state_rules``, or both."""
    progress_completed: Pointer | None = Field(None, examples=["/request_counts/completed"])
    """Progress: how much is done."""
    progress_total: Pointer | None = Field(None, examples=["/request_counts/total"])
    """Progress: how much there is."""
    error: Pointer | Annotated[list[Pointer], Field(min_length=1)] | None = Field(
        None, examples=["/errors/data/0", ["/error", "/response/raiMediaFilteredReasons"]]
    )
    """The provider's error (an object, or a message); or a list of pointers, every one
    present joined into the reason (an object's ``message``, a list's elements)."""
    poll_hint: Pointer | None = Field(None, examples=["/poll_after_seconds"])
    """Seconds the provider asks to wait before the next status read."""
    remote_time: Pointer | None = Field(None, examples=["/updated_at"])
    """The provider's own timestamp of what it reports."""
    inline_result: Pointer | None = Field(None, examples=["/result"])
    """A result document inside a create or status answer (``""``: the answer itself)."""
    fields: FieldMap = Field({}, examples=[{"output_file_id": "/output_file_id"}])
    """Named values read from the status answer; result documents name them by their own
    names (``{output_file_id}``)."""
    result: ResultPointers = ResultPointers()
    """Pointers into a JSON result document."""


Origin = Literal["own", "credentials", "anonymous"]


class Profile(SpecModel):
    """One provider, as declared in YAML (language v2).

    Beyond each field's own rules: ``pointers.state`` or ``state_rules`` (or both) must be
    given; without ``result``, ``pointers.inline_result`` is required; a ``lookup`` by
    ``token`` needs ``idempotency``, one by ``client_reference`` needs ``client_reference``.
    """

    version: Literal[2] = Field(examples=[2])
    """The profile language; must be ``2``."""
    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", examples=["openai_batch"])]
    """The provider name agents use."""
    # The hooks live in app/providers/language/adapter.py.
    adapter: Annotated[str, Field(pattern=adapters.NAME.pattern)] | None = Field(
        None, examples=["google_document_ai"]
    )
    """A Python file beside the profile (``NAME.py``) whose hooks say what YAML cannot
    (docs/profiles.md, "Python adapters")."""
    base_url: Annotated[str, AfterValidator(_check_base_url)] = Field(
        examples=["https://api.openai.com"]
    )
    """Absolute http(s) URL, without user info, query or fragment."""
    base_url_env: EnvName | None = Field(None, examples=["JOBGATE_OPENAI_BASE_URL"])
    """An environment variable that overrides ``base_url`` when set."""
    origins: list[OriginSpec] = Field(
        [], examples=[[{"url": "https://files.example.com", "credentials": False}]]
    )
    """Other origins a provider's links may point at (see Credentials and origins)."""
    credentials: CredentialSpec | None = Field(
        None, examples=[{"type": "bearer", "env": "OPENAI_API_KEY"}]
    )
    """The credential, by reference."""
    headers: dict[HeaderName, TemplateText] = Field(
        {}, examples=[{"anthropic-version": "2023-06-01"}]
    )
    """Headers sent on every call (Templates over the variables)."""
    query: dict[str, TemplateText] = Field({}, examples=[{"api-version": "2023-04-01"}])
    """Query parameters sent on every call built from a path (Templates over the variables)."""
    vars: dict[Name, VarSpec] = Field({}, examples=[{"project": {"env": "GOOGLE_CLOUD_PROJECT"}}])
    """Named deployment settings, not secrets; templates name each by its own name
    (``{project}``)."""
    idempotency: IdempotencySpec = Field(
        IdempotencySpec(location="none"),
        examples=[{"location": "header", "header": "Idempotency-Key"}],
    )
    """Where the create token goes; anything but ``none`` declares the provider honours it."""
    client_reference: ClientReferenceSpec = Field(
        ClientReferenceSpec(),
        examples=[{"location": "metadata", "pointer": "/metadata/jobgate_ref"}],
    )
    """Where the operation id goes on create."""
    trace_header: HeaderName | None = Field(None, examples=["X-Trace-Id"])
    """A header carrying the operation's trace id on every call."""
    kinds: Annotated[dict[str, KindSpec], Field(min_length=1)]
    """Kind name to how that kind of job is created."""
    status: Endpoint = Field(examples=[{"method": "GET", "path": "/v1/batches/{job_id}"}])
    """The status endpoint: any method, with a ``body`` when it is a POST (Templates over
    ``job_id``, ``input``, ``kind`` and the variables)."""
    cancel: CancelEndpoint | None = None
    """The cancel endpoint; none: jobgate cannot cancel, and watches for the end."""
    result: ResultSpec | None = None
    """The result documents; none: the result is inline (``pointers.inline_result``)."""
    lookup: LookupEndpoint | None = None
    """How to find a job again after a lost create answer (see single-create.md)."""
    manual_search: ManualSearch = Field(
        ManualSearch(), examples=[{"list_call": "GET https://api.example.com/v1/jobs"}]
    )
    """How a person finds a job by hand; named in ``create_unconfirmed`` errors."""
    pointers: Pointers
    """Where answers keep the job id, the state and the rest."""
    states: dict[str, RemoteClass] = Field({}, examples=[{"completed": "succeeded"}])
    """The provider's words (at ``pointers.state``) to classes; a word not listed is
    ``running``, never success."""
    state_rules: list[StateRule] = []
    """Rules checked before ``states``, top to bottom; the first whose conditions all hold
    gives the class (see State rules and counts)."""
    counts: CountsSpec | None = Field(None, examples=[{"total": "/request_counts/total"}])
    """Where item counts are read (see State rules and counts)."""
    retry_hint: RetryHint | None = Field(
        None, examples=[{"pointer": "/error/details/*/retryDelay", "format": "duration"}]
    )
    """The provider's retry delay in an error answer, when it sends no ``Retry-After``."""
    polling: PollingPolicy = PollingPolicy()
    """The status-poll backoff."""
    deadlines: Deadlines = Deadlines()
    """Default deadlines."""
    timeouts: Timeouts = Timeouts()
    """Per-call timeouts."""
    webhooks: WebhookSpec = WebhookSpec()
    """The provider's webhooks."""
    validation: ValidationDefaults = ValidationDefaults()
    """Result checks."""
    _hooks: adapters.Adapter = PrivateAttr(default=adapters.DEFAULT)

    @property
    def hooks(self) -> adapters.Adapter:
        """The profile's adapter (the base class, whose hooks all defer, when it names none)."""
        return self._hooks

    def with_hooks(self, hooks: adapters.Adapter) -> Profile:
        """This profile with ``hooks`` as its adapter (the loader sets the one it names)."""
        self._hooks = hooks
        return self

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        if self.result is None and self.pointers.inline_result is None:
            raise ValueError("without a result endpoint, pointers.inline_result is required")
        by = self.lookup.by if self.lookup is not None else None
        if by == "token" and self.idempotency.location == "none":
            raise ValueError("lookup by token needs a token sent on create (idempotency)")
        if by == "client_reference" and self.client_reference.location == "none":
            raise ValueError("lookup by client_reference needs client_reference on create")
        found = problems(self)
        if found:
            raise FieldProblems(found)
        return self

    @property
    def single_create(self) -> SingleCreate:
        """THE one derivation of how a single remote job is ensured for this provider:
        ``token`` when it honours the idempotency token, else ``lookup`` when a job can
        be found again by its client reference, else ``none``."""
        if self.idempotency.location != "none":
            return SingleCreate.TOKEN
        if self.lookup is not None and self.lookup.by == "client_reference":
            return SingleCreate.LOOKUP
        return SingleCreate.NONE

    @property
    def itemless(self) -> bool:
        """The profile counts no items: a job is one piece of work (the outcome table's
        `itemless`). A profile that counts items never reports a success with none."""
        return self.counts is None and not adapters.counts_items(self.hooks)

    def remote_class(self, state: str) -> RemoteClass:
        """Map a provider word; an unknown one is RUNNING (never mistaken for success).
        State rules need the whole answer: see app.providers.answers.state_rules.classify."""
        return self.states.get(state, RemoteClass.RUNNING)

    def resolve_credential(self, env: Mapping[str, str]) -> Credential | None:
        """Resolve the credential now; ``None`` if none is configured and it is optional.

        Raises ``CredentialError`` when a required credential is missing.
        """
        spec = self.credentials
        return None if spec is None else spec.credential(env, f"profile {self.name}")

    def resolve_webhook_secret(self, env: Mapping[str, str]) -> Secret | None:
        """The webhook secret, resolved now; ``None`` when not configured."""
        ref = self.webhooks.secret
        return None if ref is None else ref.resolve(env)

    def unavailable(self, env: Mapping[str, str]) -> str | None:
        """Why calls to this provider would be refused right now (a required credential is
        not set, or unreadable), else None. A profile loads without its credential; it is
        usable only once the credential is there."""
        try:
            self.resolve_credential(env)
        except CredentialError as exc:
            return str(exc)
        return None

    def var_values(self, env: Mapping[str, str]) -> dict[str, str | None]:
        """Profile variables as they are now: the environment, else the default."""
        return {
            name: (env.get(v.env) if v.env else None) or v.default for name, v in self.vars.items()
        }

    def origin_of(self, url: str) -> Origin | None:
        """How a URL may be called: ``own`` (the base URL's origin) and ``credentials``
        (a listed origin that may get them) carry the credential, ``anonymous`` (a listed
        origin) gets none, ``None`` (anywhere else) is refused."""
        target = _origin(url)
        if target is None:
            return None
        if target == _origin(self.base_url):
            return "own"
        for extra in self.origins:
            if target == _origin(extra.url):
                return "credentials" if extra.credentials else "anonymous"
        return None


def _origin(url: str) -> tuple[str, str, int] | None:
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username:
        return None
    return parts.scheme, parts.hostname.lower(), port


# --- cross-field checks: every placeholder names a value its endpoint will have.
#
# Which names a template may use depends on where it is (the create has the input, status
# and result documents have the job id and the fields read from the status answer).
# Problems carry their dotted field path, so the loader can say
# ``openai_batch.yaml: result.documents.1.path: unknown placeholder 'eror_file_id'``.


# Values the gateway itself supplies; variables, fields and captures may not reuse them.
RESERVED = frozenset({"input", "kind", "client_reference", "token", "job_id", "reason"})
CREATE_NAMES = frozenset({"input", "kind", "client_reference", "token"})

# What a call about an existing job may name: the job id from the create's answer, and
# the operation's own input and kind (a model id in the path, an app in the URL).
READ_NAMES = frozenset({"job_id", "input", "kind"})

Problem = tuple[str, str]  # (dotted path below the profile, message)


def _read_body(where: str, ep: Endpoint) -> list[Problem]:
    """A read (status, result, lookup) sends a body exactly when its method carries one:
    a POST read without one is answered 400 by every provider that reads by POST."""
    if ep.method in ("POST", "PUT", "PATCH") and ep.body is None:
        why = (f"a {ep.method} read needs the body the provider's call takes (e.g. "
               '{operationName: $job_id}); write body: {} for an empty JSON object')  # fmt: skip
        return [(f"{where}.body", why)]
    if ep.method in ("GET", "DELETE") and ep.body is not None:
        return [(f"{where}.body", f"a {ep.method} sends no body; use POST for a read with one")]
    return []


class FieldProblems(ValueError):
    """Several problems, each at its own field; the loader prints one line per problem."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p}: {m}" for p, m in problems))
        self.problems = problems


def _template(where: str, template: Any, allowed: Iterable[str]) -> list[Problem]:
    try:
        templates.check(template, frozenset(allowed))
    except templates.TemplateError as exc:
        return [(where, str(exc))]
    return []


def _endpoint(where: str, ep: Endpoint, allowed: frozenset[str]) -> list[Problem]:
    found: list[Problem] = []
    for part, template in ep.template_parts().items():
        found += _template(f"{where}.{part}", template, allowed)
    return found


def _names(profile: Profile) -> tuple[list[Problem], frozenset[str], frozenset[str]]:
    found: list[Problem] = []
    variables = frozenset(profile.vars)
    fields = frozenset(profile.pointers.fields)
    for name in sorted(variables & RESERVED):
        found.append((f"vars.{name}", f"{name!r} is a name the gateway supplies; pick another"))
    for name in sorted(fields & (RESERVED | variables)):
        found.append((f"pointers.fields.{name}", f"{name!r} is already a variable or reserved"))
    return found, variables, fields


def problems(profile: Profile) -> list[Problem]:
    """Every placeholder problem in the profile, in field order."""
    found, variables, fields = _names(profile)
    found += _template("headers", profile.headers, variables)
    found += _template("query", profile.query, variables)
    ref = profile.client_reference
    found += _template("client_reference.format", ref.format, variables | {"client_reference"})
    for kind, spec in profile.kinds.items():
        allowed = CREATE_NAMES | variables
        for i, step in enumerate(spec.create.prepare):
            where = f"kinds.{kind}.create.prepare.{i}"
            found += _endpoint(where, step, allowed)
            clash = sorted(set(step.capture) & allowed)
            if clash:
                found.append((f"{where}.capture", f"{clash[0]!r} is already a known name"))
            allowed = allowed | frozenset(step.capture)
        found += _endpoint(f"kinds.{kind}.create", spec.create, allowed)
    job = variables | READ_NAMES
    found += _endpoint("status", profile.status, job)
    found += _read_body("status", profile.status)
    if profile.cancel is not None:
        found += _endpoint("cancel", profile.cancel, job | {"reason"})
    if profile.result is not None:
        for i, doc in enumerate(profile.result.documents):
            found += _endpoint(f"result.documents.{i}", doc, job | fields)
            found += _read_body(f"result.documents.{i}", doc)
    if profile.lookup is not None:
        found += _endpoint("lookup", profile.lookup, variables | {"input", "kind"})
        found += _read_body("lookup", profile.lookup)
    search = profile.manual_search
    found += _template("manual_search.list_call", search.list_call, variables)
    found += _template("manual_search.console_url", search.console_url, variables)
    fetch = profile.webhooks.secret_fetch
    if fetch is not None:
        found += _template("webhooks.secret_fetch.path", fetch.path, variables)
    if profile.pointers.state is None and not profile.state_rules:
        found.append(("pointers.state", "give pointers.state, state_rules, or both"))
    return found
