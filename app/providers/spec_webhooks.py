"""The webhooks a provider sends: signature scheme, secret, and where events keep their ids."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from app.providers.secrets import HeaderName, SecretRef
from app.providers.spec_base import Method, Pointer, Seconds, SpecModel, UrlPath


class SecretFetch(SpecModel):
    """A provider that serves its webhook signing secret (Replicate's
    ``GET /v1/webhooks/default/secret``): asked with the profile's credential."""

    method: Method = "GET"
    path: UrlPath
    pointer: Pointer  # where the secret is in the answer


class WebhookSpec(SpecModel):
    """``standard``: Standard Webhooks (``webhook-id``, ``webhook-timestamp``,
    ``webhook-signature``; OpenAI and Replicate sign this way). ``hmac``: a hex
    HMAC-SHA256 of the raw body in ``signature_header``. The secret is a reference
    (``secret``); ``secret_fetch`` says how to ask the provider for it instead."""

    scheme: Literal["standard", "hmac", "none"] = "none"
    secret: SecretRef | None = None
    secret_fetch: SecretFetch | None = None
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
