"""Secrets and credentials: references in the profile, values only at call time.

A profile never holds a secret, only a ``SecretRef`` (an environment variable or
a file) that is read when a call is made (docs/security.md, "Secrets"). The value read is wrapped in
a ``Secret`` so that it never shows itself in a repr, a log or an exception.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

REDACTED = "[redacted]"
_INLINE_SECRET_KEYS = frozenset({"value", "token", "secret", "password", "api_key", "key"})


class CredentialError(Exception):
    """A required credential (or webhook secret) could not be resolved at call time."""


def _env_name(value: str) -> str:
    # Also a guard against a secret pasted where a variable name belongs: no echo.
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        raise ValueError("must be an environment variable name (letters, digits, _)")
    return value


def _header_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+", value):
        raise ValueError("must be an HTTP header name")
    return value


EnvName = Annotated[str, AfterValidator(_env_name)]
HeaderName = Annotated[str, AfterValidator(_header_name)]


class Secret:
    """A resolved secret value that never shows itself in repr, str or logs."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The raw value, for the one place that must send or verify with it."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    __str__ = __repr__


@dataclass(frozen=True)
class Credential:
    """A credential resolved for one call: where it goes (a header, or a query parameter
    when ``param`` is set) and its (hidden) value."""

    header: str
    value: Secret = field(repr=False)  # the full header value, e.g. "Bearer <token>"
    secret: Secret = field(repr=False)  # the raw secret, so exchanges can scrub echoes
    param: str | None = None  # a query parameter instead of the header (``type: query``)


class SecretRef(BaseModel):
    """Where a secret lives: an environment variable or a file, never inline. Inline
    secrets (``value``, ``token``, ``secret``, ``password``, ``api_key``, ``key``) are
    refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    env: EnvName | None = Field(None, examples=["OPENAI_WEBHOOK_SECRET"])
    """The environment variable holding the secret (give ``env`` or ``file``)."""
    file: Path | None = Field(None, examples=["/run/secrets/webhook_secret"])
    """A file holding the secret (give ``env`` or ``file``)."""

    @model_validator(mode="before")
    @classmethod
    def _no_inline_secret(cls, data: Any) -> Any:
        if isinstance(data, dict) and _INLINE_SECRET_KEYS & set(data):
            raise ValueError("inline secrets are not allowed; reference one with env or file")
        return data

    @model_validator(mode="after")
    def _exactly_one(self) -> SecretRef:
        if (self.env is None) == (self.file is None):
            raise ValueError("give exactly one of env or file")
        return self

    def resolve(self, env: Mapping[str, str]) -> Secret | None:
        """Read the secret now; ``None`` when the variable is unset/empty or the file absent."""
        if self.env is not None:
            value = env.get(self.env, "")
        else:
            assert self.file is not None
            try:
                value = self.file.expanduser().read_text(encoding="utf-8").strip()
            except FileNotFoundError:
                return None
            except OSError as exc:  # unreadable is a config error, not "not configured"
                raise CredentialError(f"secret file {self.file}: {exc.strerror}") from None
        return Secret(value) if value else None

    def describe(self) -> str:
        """Where the secret is expected, for error messages (never the value)."""
        return f"env {self.env}" if self.env is not None else f"file {self.file}"


class CredentialSpec(SecretRef):
    """The provider's credential: where it is (``env`` or ``file``, exactly one) and how it
    is sent. Inline secrets (``value``, ``token``, ``secret``, ``password``, ``api_key``,
    ``key``) are refused. It is read at call time, never stored or logged.

    ``type: bearer`` sends ``Authorization: Bearer <secret>``; ``type: header`` sends
    ``prefix`` + the secret in ``header`` (fal: ``{type: header, header: Authorization,
    prefix: "Key "}``; an API key header: ``{type: header, header: x-api-key}``);
    ``type: query`` sends it as the query parameter ``param`` (``?key=<secret>``). Wherever
    it goes, history, logs and `jobgate profiles check` show ``[redacted]`` instead.
    """

    env: EnvName | None = Field(None, examples=["ANTHROPIC_API_KEY"])
    """The environment variable holding the secret (give ``env`` or ``file``)."""
    type: Literal["bearer", "header", "query"] = Field("bearer", examples=["header"])
    """``bearer``: ``Authorization: Bearer <secret>``; ``header``: ``prefix`` and the secret
    in ``header``; ``query``: the secret as the query parameter ``param``."""
    header: HeaderName | None = Field(None, examples=["x-api-key"])
    """The header for ``type: header`` (needed there)."""
    prefix: Annotated[str, Field(max_length=64, pattern=r"^[!-~]*[ ]?$")] | None = Field(
        None, examples=["Key "]
    )
    """Text sent before the secret in the header (``type: header``; e.g. ``"Key "``,
    ``"Token "``); none: the secret alone. ``bearer`` is ``prefix: "Bearer "`` on
    ``Authorization``."""
    param: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.~-]+$")] | None = Field(
        None, examples=["key"]
    )
    """The query parameter for ``type: query`` (needed there)."""
    optional: bool = Field(False, examples=[True])
    """``true``: send no credential while it is unset (the mock); ``false``: refuse every
    call until it is set."""

    @model_validator(mode="after")
    def _header_for_type(self) -> CredentialSpec:
        if self.type == "header" and self.header is None:
            raise ValueError("type header needs a header name")
        if self.type == "query" and self.param is None:
            raise ValueError("type query needs a param (the query parameter's name)")
        if self.type != "query" and self.param is not None:
            raise ValueError("param is for type query")
        if self.type != "header" and self.prefix is not None:
            raise ValueError("prefix is for type header (bearer already sends 'Bearer ')")
        if self.type == "query" and self.header is not None:
            raise ValueError("header is for type bearer or header, not query")
        return self

    @property
    def header_name(self) -> str:
        """The header that carries the credential (``Authorization`` unless named)."""
        return self.header or "Authorization"

    def shown(self, masked: str = REDACTED) -> str:
        """The value as `jobgate profiles check` shows it: the prefix, the secret masked."""
        if self.type == "bearer":
            return f"Bearer {masked}"
        return f"{self.prefix or ''}{masked}" if self.type == "header" else masked

    def credential(self, env: Mapping[str, str], owner: str) -> Credential | None:
        """Resolve the credential now; ``None`` if it is unset and optional.

        Raises ``CredentialError`` (naming ``owner``, e.g. "profile acme") when a
        required credential is missing.
        """
        secret = self.resolve(env)
        if secret is None:
            if self.optional:
                return None
            raise CredentialError(f"{owner}: credential {self.describe()} is not set")
        value = self.shown(secret.reveal())
        param = self.param if self.type == "query" else None
        return Credential(header=self.header_name, value=Secret(value), secret=secret, param=param)
