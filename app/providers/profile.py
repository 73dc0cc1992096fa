"""Declarative provider profiles: the YAML schema and its loader.

A profile describes a provider's HTTP contract (endpoints, JSON pointers, state
names, polling, deadlines, webhooks) so that adding a provider is a YAML file,
not code. Credentials are references (an environment variable or a file) that
are resolved at call time and never stored on the profile (SPEC 1.10).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import (
    AfterValidator,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from app.providers.lookup import LookupEndpoint as LookupEndpoint  # re-exported
from app.providers.lookup import ManualSearch
from app.providers.secrets import Credential, CredentialSpec, EnvName, HeaderName, Secret, SecretRef
from app.providers.secrets import CredentialError as CredentialError  # re-exported for callers
from app.providers.spec_base import Endpoint as Endpoint  # re-exported for the client
from app.providers.spec_base import Method, Pointer, Seconds
from app.providers.spec_base import SpecModel as _Model
from app.providers.types import RemoteClass, SingleCreate

BUILTIN_DIR = Path(__file__).with_name("profiles")


class ProfileError(Exception):
    """A profile file is unreadable or invalid; the message names the file and field."""


def _check_base_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("base_url must be an absolute http(s) URL")
    # Credentials in a URL would end up in exchanges and logs: refuse them.
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError("base_url must not carry user info, a query or a fragment")
    return url


# Body template placeholders, per endpoint; "$$x" is the literal string "$x".
CREATE_PLACEHOLDERS = frozenset({"$input", "$kind", "$client_reference", "$token"})
CANCEL_PLACEHOLDERS = frozenset({"$reason", "$job_id"})


def _check_template(template: Any, allowed: frozenset[str]) -> None:
    if isinstance(template, dict):
        for item in template.values():
            _check_template(item, allowed)
    elif isinstance(template, list):
        for item in template:
            _check_template(item, allowed)
    elif isinstance(template, str) and template.startswith("$") and not template.startswith("$$"):
        if template not in allowed:
            raise ValueError(f"unknown placeholder; allowed: {', '.join(sorted(allowed))}")


class IdempotencySpec(_Model):
    """Where the idempotency token goes on create: a header, a body pointer, a query
    parameter, or nowhere. Anything but ``none`` declares that the provider HONOURS the
    token (a second create with it starts no second job): only then is a create resent."""

    location: Literal["header", "body", "query", "none"] = "header"
    header: HeaderName | None = None
    pointer: Pointer | None = None
    param: str | None = None  # location query: the parameter name

    @model_validator(mode="after")
    def _target(self) -> IdempotencySpec:
        if self.location == "header" and self.header is None:
            raise ValueError("location header needs a header name")
        if self.location == "body" and not self.pointer:
            raise ValueError("location body needs a pointer")
        if self.location == "query" and not self.param:
            raise ValueError("location query needs a param")
        return self


class ClientReferenceSpec(_Model):
    """Where the operation id goes on create: a body field or the provider's metadata."""

    location: Literal["body", "metadata", "none"] = "none"
    pointer: Pointer | None = None  # into the create body, e.g. /metadata/jobgate_ref

    @model_validator(mode="after")
    def _target(self) -> ClientReferenceSpec:
        if self.location != "none" and not self.pointer:
            raise ValueError(f"location {self.location} needs a pointer")
        return self


class CreateEndpoint(Endpoint):
    method: Method = "POST"
    body: Any = None  # JSON template with $input/$kind/$client_reference/$token

    @field_validator("body")
    @classmethod
    def _template(cls, body: Any) -> Any:
        _check_template(body, CREATE_PLACEHOLDERS)
        return body


class KindSpec(_Model):
    create: CreateEndpoint


class CancelEndpoint(Endpoint):
    method: Method = "POST"
    body: Any = None  # JSON template with $reason/$job_id
    idempotent: bool = False  # may a second cancel be sent safely?

    @field_validator("body")
    @classmethod
    def _template(cls, body: Any) -> Any:
        _check_template(body, CANCEL_PLACEHOLDERS)
        return body


class ResultEndpoint(Endpoint):
    safe_to_repeat: bool = False  # conservative: a download may be single-use


class ResultPointers(_Model):
    """Pointers into the result document (result endpoint body or inline result)."""

    data: Pointer | None = "/data"
    sha256: Pointer | None = None
    processed: Pointer | None = None
    succeeded: Pointer | None = None
    failed: Pointer | None = None
    failed_items: Pointer | None = None


class Pointers(_Model):
    """Pointers into create/status bodies."""

    job_id: Pointer
    state: Pointer
    progress_completed: Pointer | None = None
    progress_total: Pointer | None = None
    error: Pointer | None = None
    poll_hint: Pointer | None = None  # seconds the provider asks us to wait
    remote_time: Pointer | None = None  # the provider's own timestamp of what it reports
    inline_result: Pointer | None = None  # result document inside a create/status body
    result: ResultPointers = ResultPointers()


class PollingPolicy(_Model):
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


class Deadlines(_Model):
    create_seconds: Seconds = 300.0
    result_seconds: Seconds = 3600.0
    cancel_seconds: Seconds = 300.0


class Timeouts(_Model):
    connect: Seconds = 5.0
    read: Seconds = 30.0
    seconds: Seconds = 60.0  # wall-clock bound on one whole call


class WebhookSpec(_Model):
    scheme: Literal["standard", "hmac", "none"] = "none"
    secret: SecretRef | None = None
    tolerance_seconds: Seconds = 300.0
    signature_header: HeaderName | None = None  # hmac only
    event_id: Pointer | None = None  # de-duplication when no webhook-id header
    event_type: Pointer | None = None
    job_id: Pointer | None = None
    state: Pointer | None = None

    @model_validator(mode="after")
    def _complete(self) -> WebhookSpec:
        if self.scheme != "none" and self.secret is None:
            raise ValueError(f"scheme {self.scheme} needs a secret reference")
        if self.scheme == "hmac" and self.signature_header is None:
            raise ValueError("scheme hmac needs signature_header")
        return self


class ValidationDefaults(_Model):
    checksum: Literal["none", "sha256_rfc8785"] = "none"
    max_bytes: Annotated[int, Field(gt=0)] = 10 * 1024 * 1024
    content_type: str = "application/json"


class Profile(_Model):
    """One provider, as declared in YAML."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")]
    base_url: Annotated[str, AfterValidator(_check_base_url)]
    base_url_env: EnvName | None = None
    credentials: CredentialSpec | None = None
    idempotency: IdempotencySpec = IdempotencySpec(location="none")
    client_reference: ClientReferenceSpec = ClientReferenceSpec()
    trace_header: HeaderName | None = None
    kinds: Annotated[dict[str, KindSpec], Field(min_length=1)]
    status: Endpoint
    cancel: CancelEndpoint | None = None
    result: ResultEndpoint | None = None  # None: the result is inline in the status body
    lookup: LookupEndpoint | None = None
    manual_search: ManualSearch = ManualSearch()
    pointers: Pointers
    states: Annotated[dict[str, RemoteClass], Field(min_length=1)]
    polling: PollingPolicy = PollingPolicy()
    deadlines: Deadlines = Deadlines()
    timeouts: Timeouts = Timeouts()
    webhooks: WebhookSpec = WebhookSpec()
    validation: ValidationDefaults = ValidationDefaults()

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        if self.result is None and self.pointers.inline_result is None:
            raise ValueError("without a result endpoint, pointers.inline_result is required")
        by = self.lookup.by if self.lookup is not None else None
        if by == "token" and self.idempotency.location == "none":
            raise ValueError("lookup by token needs a token sent on create (idempotency)")
        if by == "client_reference" and self.client_reference.location == "none":
            raise ValueError("lookup by client_reference needs client_reference on create")
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

    def remote_class(self, state: str) -> RemoteClass:
        """Map a provider state; an unknown one is RUNNING (never mistaken for success)."""
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


def _format_errors(source: str, exc: ValidationError) -> str:
    # Only locations and messages: pydantic's own str() echoes input values,
    # which could be a pasted secret.
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{source}: {loc}: {msg[:1].lower()}{msg[1:]}")
    return "; ".join(parts)


def load_profile(path: Path, env: Mapping[str, str]) -> Profile:
    """Load and validate one profile file, applying ``base_url_env`` from ``env``."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ProfileError(f"{path}: invalid YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: (top level): must be a mapping")
    try:
        profile = Profile.model_validate(data)
    except ValidationError as exc:
        raise ProfileError(_format_errors(str(path), exc)) from None
    override = env.get(profile.base_url_env, "") if profile.base_url_env else ""
    if override:
        try:
            _check_base_url(override)
        except ValueError as exc:
            raise ProfileError(f"{path}: base_url_env ({profile.base_url_env}): {exc}") from None
        profile = profile.model_copy(update={"base_url": override})
    return profile


def load_profiles(extra_dir: Path | None, env: Mapping[str, str]) -> dict[str, Profile]:
    """Load the built-in profiles, then ``extra_dir/*.yaml``; a duplicate name is an error."""
    files = sorted(BUILTIN_DIR.glob("*.yaml"))
    if extra_dir is not None:
        if not extra_dir.is_dir():
            raise ProfileError(f"{extra_dir}: profiles directory does not exist")
        files += sorted(extra_dir.glob("*.yaml"))
    profiles: dict[str, Profile] = {}
    origin: dict[str, Path] = {}
    for path in files:
        profile = load_profile(path, env)
        if profile.name in profiles:
            first = origin[profile.name]
            raise ProfileError(f"{path}: name: profile {profile.name!r} is already in {first}")
        profiles[profile.name] = profile
        origin[profile.name] = path
    return profiles
