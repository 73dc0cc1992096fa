"""The webhooks a provider sends: signature scheme, secret, and where events keep their ids."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from app.providers.language.secrets import HeaderName, SecretRef
from app.providers.language.spec_base import Method, Pointer, Seconds, SpecModel, UrlPath


class SecretFetch(SpecModel):
    """A provider that serves its webhook signing secret (Replicate's
    ``GET /v1/webhooks/default/secret``): asked with the profile's credential."""

    method: Method = "GET"
    """The HTTP method."""
    path: UrlPath = Field(examples=["/v1/webhooks/default/secret"])
    """Where to ask, after ``base_url`` (a Template over the variables)."""
    pointer: Pointer = Field(examples=["/key"])
    """Where the secret is in the answer."""


class WebhookSpec(SpecModel):
    """``standard``: Standard Webhooks (``webhook-id``, ``webhook-timestamp``,
    ``webhook-signature``; OpenAI and Replicate sign this way). ``hmac``: a hex
    HMAC-SHA256 of the raw body in ``signature_header``. The secret is a reference
    (``secret``); ``secret_fetch`` says how to ask the provider for it instead.

    A webhook never changes state by itself: it makes the operation due for a status read.
    """

    scheme: Literal["standard", "hmac", "none"] = Field("none", examples=["standard"])
    """``standard`` (Standard Webhooks), ``hmac``, or ``none``: webhooks are refused."""
    secret: SecretRef | None = Field(None, examples=[{"env": "OPENAI_WEBHOOK_SECRET"}])
    """The signing secret, by reference (required unless ``none``)."""
    secret_fetch: SecretFetch | None = Field(
        None, examples=[{"path": "/v1/webhooks/default/secret", "pointer": "/key"}]
    )
    """How to ask the provider for the secret while ``secret`` is unset: fetched once and
    kept per profile by the webhook route (see Driver integration)."""
    tolerance_seconds: Seconds = 300.0
    """The accepted clock difference for ``webhook-timestamp``."""
    signature_header: HeaderName | None = Field(None, examples=["X-Signature"])
    """The header holding the signature (``hmac`` only)."""
    event_id: Pointer | None = Field(None, examples=["/id"])
    """The event's id, for de-duplication when there is no ``webhook-id`` header."""
    event_type: Pointer | None = Field(None, examples=["/type"])
    """The event's type."""
    job_id: Pointer | None = Field(None, examples=["/data/id"])
    """The job the event is about."""
    state: Pointer | None = Field(None, examples=["/status"])
    """The job's state in the event."""

    @model_validator(mode="after")
    def _complete(self) -> WebhookSpec:
        if self.scheme != "none" and self.secret is None:
            raise ValueError(f"scheme {self.scheme} needs a secret reference")
        if self.scheme == "hmac" and self.signature_header is None:
            raise ValueError("scheme hmac needs signature_header")
        return self
