"""Settings shared by the provider fakes, read from `JOBGATE_FAKE_*` environment variables.

One fake runs per process (`jobgate fake-provider NAME`), so one prefix serves all of
them; each fake reads only the fields it needs (docs/provider-fakes.md lists which).
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class FakeSettings(BaseSettings):
    """What a provider fake can be told from the environment."""

    model_config = SettingsConfigDict(env_prefix="JOBGATE_FAKE_", extra="ignore")

    # The one credential the fake accepts, in the header its provider documents.
    api_key: str = Field(default="fake-api-key", repr=False)
    # OpenAI only: the project's webhook endpoint (OpenAI configures it in the dashboard,
    # not per request). Unset: no webhooks.
    webhook_url: str | None = None
    # Standard Webhooks signing secret (`whsec_<base64>`) for OpenAI and Replicate webhooks.
    # Unset: a random one is made at start; Replicate serves it at /v1/webhooks/default/secret.
    webhook_secret: str | None = Field(default=None, repr=False)
    # Replicate only: results per page of GET /v1/predictions (the API takes no limit).
    page_size: int = Field(default=100, ge=1)
    # Document AI only: documents a batchProcess operation processes per status read.
    documents_per_read: int = Field(default=1, ge=1)
