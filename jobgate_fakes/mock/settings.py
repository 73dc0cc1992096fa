"""Settings of the bundled mock provider, read from `JOBGATE_MOCK_*` environment variables."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class MockSettings(BaseSettings):
    """Everything the mock provider can be told from the environment (see docs/mock-provider.md)."""

    model_config = SettingsConfigDict(env_prefix="JOBGATE_MOCK_", extra="ignore")

    # When set, every /v1/* call must carry `Authorization: Bearer <token>`.
    provider_token: str | None = Field(default=None, repr=False)
    # The mock's private SQLite file (jobs and counters survive restarts); ":memory:" allowed.
    state_path: str = "./data/mock_provider.db"
    # Where job webhooks go; unset means no webhooks at all.
    webhook_url: str | None = None
    # Standard Webhooks secret (`whsec_...`) used to sign them.
    webhook_secret: str | None = Field(default=None, repr=False)
