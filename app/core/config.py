"""One settings object for the gateway, read from `JOBGATE_*` environment variables."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.core.conn_pool import PING_AFTER_IDLE_SECONDS


class Settings(BaseSettings):
    """Safe defaults for a first run; unsafe combinations are refused at start."""

    # hide_input_in_errors: a refused setting may be a secret; the error names it, never
    # repeats its value.
    model_config = SettingsConfigDict(
        env_prefix="JOBGATE_", extra="ignore", populate_by_name=True, hide_input_in_errors=True
    )

    # Unset: the SQLite default `<data_dir>/jobgate.db`, which `serve`/`observe` migrate
    # themselves; any configured database must be migrated with `jobgate migrate`.
    database_url: str = ""
    # PostgreSQL: a pooled connection idle at least this long is pinged before use (0:
    # before every use); one that was just handed back is used at once (app/core/conn_pool.py).
    db_ping_after_idle_seconds: float = Field(default=PING_AFTER_IDLE_SECONDS, ge=0)
    data_dir: Path = Path("./data")
    profiles_dir: Path | None = None
    mock_provider_url: str = "http://127.0.0.1:8081"
    mock_provider_token: str | None = Field(default=None, repr=False)
    auth: Literal["keys", "dev"] = "keys"
    time_scale: float = Field(default=1.0, gt=0)

    host: str = "127.0.0.1"
    port: int = 8080
    max_body_bytes: int = 256 * 1024
    # POST /v1/operations answers within this many (real) seconds even when the provider's
    # create is slower: 202, done false, the create still in flight under its intake lease.
    create_answer_seconds: float = Field(default=2.0, gt=0)
    # How a request may arrive (docs/operations.md, "Limits on requests"): its request line
    # and headers within this many seconds, and at most this long; its body within this.
    request_head_timeout_seconds: float = Field(default=10.0, gt=0)
    max_header_bytes: int = Field(default=32 * 1024, ge=1024)
    request_body_timeout_seconds: float = Field(default=30.0, gt=0)
    wait_default_seconds: float = 60.0
    wait_max_seconds: float = 600.0
    # Waits and event streams one key holds open at once, per process (429 past it).
    max_held_per_key: int = Field(default=100, ge=1)
    inline_result_max_bytes: int = 64 * 1024
    # The MCP server at /mcp; when off, bodies name only REST calls (no MCP tools).
    mcp: bool = True

    # Observer tuning (seconds are real seconds; deadlines/delays are scaled by time_scale).
    observer_interval_seconds: float = 1.0
    observer_batch: int = 100
    lease_seconds: float = 30.0
    observer_id: str | None = None
    # A poll due within this many seconds is held in the observer's memory under its
    # (renewed) lease instead of being handed back and claimed again (app/core/hold.py);
    # 0 turns holding off. Never more than half the lease.
    observer_hold_seconds: float = Field(default=5.0, ge=0)
    # Exceptions in a row in one operation's steps before it is `stalled` (needs a human).
    max_step_failures: int = Field(default=5, ge=1)

    # Webhooks in: the built-in mock profile's secret (JOBGATE_MOCK_WEBHOOK_SECRET).
    mock_webhook_secret: str | None = Field(default=None, repr=False)
    # Completion callbacks out: the Standard Webhooks secret ("whsec_..."); unset = unsigned.
    callback_secret: str | None = Field(default=None, repr=False)
    # SSRF guard: callback URLs to loopback/private/link-local hosts only when true.
    allow_private_callbacks: bool = False
    callback_interval_seconds: float = 1.0

    # Log lines: JSON, or readable text when stderr is a terminal ("auto"); read by the CLI.
    log_format: Literal["auto", "json", "text"] = "auto"

    # OpenTelemetry spans (app/core/tracing.py), exported over OTLP/HTTP as the standard
    # OTEL_* variables say; JOBGATE_OTEL=on needs `pip install 'jobgate[otel]'`.
    otel: bool = False

    # The tamper-evident audit trail (docs/audit.md): JOBGATE_AUDIT=off stops appends (for
    # benchmarks); with a signing key every chain head carries its HMAC-SHA256.
    audit_enabled: bool = Field(
        default=True, validation_alias=AliasChoices("JOBGATE_AUDIT", "JOBGATE_AUDIT_ENABLED")
    )
    audit_signing_key: str | None = Field(default=None, repr=False)

    # Fault hooks for the process-level test harness: the named point kills the process.
    crash_at: str | None = None

    @field_validator("callback_secret")
    @classmethod
    def _usable_callback_secret(cls, value: str | None) -> str | None:
        """Checked here, so a malformed secret is one line at start-up, not a traceback
        from the lifespan (or a failure at every delivery)."""
        if not value:
            return None
        from standardwebhooks.webhooks import Webhook

        try:
            Webhook(value)
        except Exception:  # the library raises several kinds, the message names none
            raise ValueError(
                "JOBGATE_CALLBACK_SECRET is not a Standard Webhooks secret: 'whsec_' "
                "followed by base64 of at least one byte (e.g. whsec_ and the output of "
                "`openssl rand -base64 32`)"
            ) from None
        return value

    @model_validator(mode="after")
    def _refuse_unsafe(self) -> Settings:
        if not self.database_url:
            self.database_url = default_database_url(self.data_dir)
        if self.auth == "dev" and not _is_loopback(self.host):
            raise ValueError(
                "JOBGATE_AUTH=dev disables API keys and is only allowed when bound to "
                f"loopback; host {self.host!r} is not"
            )
        return self

    @property
    def database_is_default(self) -> bool:
        """True when no database was configured: the SQLite file under `data_dir`."""
        return self.database_url == default_database_url(self.data_dir)

    def provider_env(self) -> dict[str, str]:
        """Values the provider profiles may reference, settings winning over the process env."""
        import os

        env = dict(os.environ)
        env["JOBGATE_MOCK_PROVIDER_URL"] = self.mock_provider_url
        if self.mock_provider_token:
            env["JOBGATE_MOCK_PROVIDER_TOKEN"] = self.mock_provider_token
        if self.mock_webhook_secret:
            env["JOBGATE_MOCK_WEBHOOK_SECRET"] = self.mock_webhook_secret
        return env

    def scaled(self, seconds: float) -> float:
        """A delay or default deadline multiplied by the time scale."""
        return seconds * self.time_scale


def default_database_url(data_dir: Path) -> str:
    """The SQLite file jobgate uses when JOBGATE_DATABASE_URL is unset."""
    return f"sqlite:///{data_dir / 'jobgate.db'}"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
