"""One settings object for the gateway, read from `JOBGATE_*` environment variables."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# PostgreSQL: a pooled connection idle this long is pinged before use
# (JOBGATE_DB_PING_AFTER_IDLE_SECONDS; the pool's default, app/core/db/drivers/conn_pool.py).
PING_AFTER_IDLE_SECONDS = 1.0


class Settings(BaseSettings):
    """Safe defaults for a first run; unsafe combinations are refused at start."""

    # hide_input_in_errors: a refused setting may be a secret; the error names it, never
    # repeats its value. use_attribute_docstrings: each field's docstring is its
    # description, and docs/configuration.md is generated from them (app/core/config_doc.py).
    model_config = SettingsConfigDict(
        env_prefix="JOBGATE_",
        extra="ignore",
        populate_by_name=True,
        hide_input_in_errors=True,
        use_attribute_docstrings=True,
    )

    database_url: str = ""
    """The database. Unset: the SQLite file `<data_dir>/jobgate.db`, which `serve` and
    `observe` migrate themselves; any configured database must be migrated with
    `jobgate migrate`. PostgreSQL: `postgresql://user@host:5432/name`."""
    db_ping_after_idle_seconds: float = Field(default=PING_AFTER_IDLE_SECONDS, ge=0)
    """PostgreSQL: a pooled connection idle at least this long is pinged before use (0:
    before every use); one that was just handed back is used at once."""
    db_lock_timeout_seconds: float = Field(default=10.0, ge=0)
    """PostgreSQL: the longest a statement waits for a row lock another session holds (a
    frozen process's, say) before the request answers `503 database_busy`; 0: no bound."""
    db_statement_timeout_seconds: float = Field(default=60.0, ge=0)
    """PostgreSQL: the longest one statement may run; 0: no bound."""
    db_idle_in_transaction_timeout_seconds: float = Field(default=60.0, ge=0)
    """PostgreSQL: a session idle this long inside a transaction (a process frozen mid-step)
    is ended by the server, which releases its locks; 0: no bound."""
    clock_skew_limit_seconds: float = Field(default=2.0, gt=0)
    """The largest offset between this host's clock and the database's that a process
    accepts, and the largest jump of its wall clock against monotonic time between two
    measurements; beyond either the process is not ready (`/v1/readyz` 503), says so in
    its log and `/metrics`, and its observer claims no work (docs/operations.md,
    "Clocks")."""
    clock_check_seconds: float = Field(default=30.0, gt=0)
    """How often (real seconds) a process measures its clock against the database's."""
    clock_max_round_trip_seconds: float = Field(default=0.5, gt=0)
    """A read of the database's clock whose round trip takes longer (a busy event loop, a
    slow network) is discarded; a measurement keeps the fastest of its reads, and one
    with none this fast is tried again a second later (docs/operations.md, "Clocks")."""
    data_dir: Path = Path("./data")
    """Where the SQLite default and stored results live."""
    profiles_dir: Path | None = None
    """A folder of provider profiles (`*.yaml`, and `*.py` adapters) loaded beside the
    bundled ones (docs/profiles.md)."""
    mock_provider_url: str = "http://127.0.0.1:8081"
    """The bundled `mock` profile's base URL."""
    mock_provider_token: str | None = Field(default=None, repr=False)
    """The bearer token the `mock` profile sends, if the mock asks for one."""
    auth: Literal["keys", "dev"] = "keys"
    """`keys`: every `/v1` call needs an API key. `dev`: no keys, every caller is the
    admin `dev`; refused unless bound to loopback (`make run` uses it)."""
    session_seconds: float = Field(default=8 * 3600.0, gt=0)
    """How long a person stays signed in at `/login` (keys mode): the session cookie and
    its stored row end this long after sign-in, or at logout, or when the key is revoked."""
    time_scale: float = Field(default=1.0, gt=0)
    """Multiplies polling delays and default deadlines (tests and demos run faster)."""

    host: str = "127.0.0.1"
    """The address the gateway is bound to: `jobgate serve --host` sets it (default
    127.0.0.1), and dev mode refuses any address but loopback."""
    port: int = 8080
    """The gateway's port: `jobgate serve --port` sets it (default 8080)."""
    max_body_bytes: int = 256 * 1024
    """The largest request body, chunked or not (`413 body_too_large` past it)."""
    create_answer_seconds: float = Field(default=2.0, gt=0)
    """`POST /v1/operations` answers within this many (real) seconds even when the
    provider's create is slower: `202`, `done: false`, the create still in flight."""
    request_head_timeout_seconds: float = Field(default=10.0, gt=0)
    """A request's line and headers must arrive within this many seconds (`408` past it;
    docs/operations.md, "Limits on requests")."""
    max_header_bytes: int = Field(default=32 * 1024, ge=1024)
    """The largest request line and headers together (`431` past it)."""
    request_body_timeout_seconds: float = Field(default=30.0, gt=0)
    """A request's body must arrive within this many seconds (`408` past it)."""
    wait_default_seconds: float = 60.0
    """How long a `/wait` holds when the caller names no timeout."""
    wait_max_seconds: float = 600.0
    """The longest a `/wait` holds, whatever the caller asks."""
    max_held_per_key: int = Field(default=100, ge=1)
    """Waits and event streams one key holds open at once, per process (`429` past it)."""
    storage_reserve_bytes: int = Field(default=32 * 1024 * 1024, ge=0)
    """Free space kept on the data disk: a result that would leave less is not written
    (the operation retries it later), and `/v1/readyz` answers 503 below it."""
    inline_result_max_bytes: int = 64 * 1024
    """A checked result up to this size is kept in the operation's row; a larger one in
    the content-addressed store under `data_dir`. `GET /v1/operations/{id}/result` serves
    both."""
    policy_file: Path | None = None
    """The policy file (YAML): in-flight limits, rates, budgets and approval per key
    (docs/policy.md). Checked at start; a bad file stops the gateway. Unset: no policy."""
    approval_seconds: float = Field(default=24 * 3600.0, gt=0)
    """How long a create that needs approval waits for an operator's decision; past it
    the create ends `failed`, never sent (docs/policy.md)."""
    mcp: bool = True
    """The MCP server at `/mcp`; when off, bodies name only REST calls (no MCP tools)."""

    observer_interval_seconds: float = 1.0
    """How often an idle observer looks for due work (real seconds)."""
    observer_batch: int = 100
    """The most operations one claim takes."""
    lease_seconds: float = 30.0
    """How long an observer's lease on an operation lasts before another may take it."""
    observer_id: str | None = None
    """This observer's name in leases and history (default: host and process id)."""
    observer_hold_seconds: float = Field(default=5.0, ge=0)
    """A poll due within this many seconds is held in the observer's memory under its
    renewed lease instead of being handed back and claimed again; 0 turns holding off.
    Never more than half the lease."""
    group_commit_max: int = Field(default=64, ge=1)
    """The most step writes that share one transaction when they arrive together
    (app/core/db/group_commit.py); 1: each its own transaction."""
    progress_write_seconds: float = Field(default=5.0, ge=0)
    """A status read whose only news is the job's progress is written at most this often
    (the progress an agent reads is at most this old); a change of state is written at
    once. A read that changes nothing is never written on its own. 0: every change of
    progress at once."""
    retention_seconds: float = Field(default=30 * 24 * 3600.0, ge=0)
    """How long a finished operation is kept (from when it finished) before the observer
    prunes it with its history, result items, stored result file and delivered callback,
    leaving a tombstone (docs/operations.md, "Retention"); 0: keep forever. Operations
    that are not done, need a person or await approval are never pruned."""
    tombstone_retention_seconds: float = Field(default=400 * 24 * 3600.0, ge=0)
    """How long the tombstone of a pruned operation is kept (from when it finished): while
    it is, a create that replays its key answers `410 operation_pruned` and starts
    nothing; after it, the key is free again. Longer than `retention_seconds` (refused
    otherwise); 0: keep forever."""
    prune_batch: int = Field(default=100, ge=1)
    """Operations removed per prune transaction (short transactions, short locks)."""
    prune_interval_seconds: float = Field(default=60.0, ge=0)
    """How often (real seconds) an observer prunes one batch while there is nothing left
    to prune; while batches come back full it prunes again at its next pass (0: at every
    pass)."""
    estimate_min_jobs: int = Field(default=5, ge=1)
    """Finished (succeeded) operations of one provider and kind needed before a body
    carries an estimate (`estimate`, `estimated_seconds_left`, `expected_done_at`); with
    fewer they are null, never guessed (docs/agent-api.md, "How long")."""
    estimate_jobs: int = Field(default=200, ge=1, le=10_000)
    """How many of the most recent succeeded operations of a provider and kind the
    estimate is learned from."""
    estimate_cache_seconds: float = Field(default=30.0, ge=0)
    """How long a learned estimate is reused before it is read again (one query per
    provider and kind per period, not per body; a success in this process joins it at
    once without a query); 0: read at every body."""
    attention_slow: bool = False
    """List in `/v1/attention` the operations running longer than 90% of similar jobs
    (`why` says so); off by default: a slow job is not yet a person's question."""
    max_step_failures: int = Field(default=5, ge=1)
    """Exceptions in a row in one operation's steps before it is `stalled` (needs a human)."""
    read_failures_to_person: int = Field(default=5, ge=1)
    """Status or result reads in a row that the provider answers with the same refusal (the
    same 4xx other than 429, or the same unreadable 2xx) before the operation goes to a
    person (`stalled` for a status read, `result_unavailable` for a result read) instead of
    waiting until its deadline (docs/operations.md, "Reads that keep failing"). Timeouts,
    5xx and 429 are waited out as before."""

    mock_webhook_secret: str | None = Field(default=None, repr=False)
    """The built-in `mock` profile's webhook secret."""
    callback_secret: str | None = Field(default=None, repr=False)
    """The Standard Webhooks secret (`whsec_...`) completion callbacks are signed with;
    unset, they go out unsigned (a warning at start)."""
    allow_private_callbacks: bool = False
    """Allow callback URLs whose host is loopback, private or link-local (the SSRF guard,
    docs/security.md)."""
    callback_interval_seconds: float = 1.0
    """How often the callback delivery loop looks for due deliveries (real seconds)."""

    log_format: Literal["auto", "json", "text"] = "auto"
    """Log lines as JSON, or readable text; `auto` is text when stderr is a terminal."""

    otel: bool = False
    """OpenTelemetry spans over OTLP/HTTP, as the standard `OTEL_*` variables say; needs
    `pip install 'jobgate[otel]'` (docs/operations.md, "Tracing")."""

    audit_enabled: bool = Field(
        default=True, validation_alias=AliasChoices("JOBGATE_AUDIT", "JOBGATE_AUDIT_ENABLED")
    )
    """The tamper-evident audit trail (docs/audit.md); `JOBGATE_AUDIT=off` stops appends,
    for benchmarks."""
    audit_signing_key: str | None = Field(default=None, repr=False)
    """With a key, every audit chain head carries its HMAC-SHA256."""

    crash_at: str | None = None
    """For the process-level test harness only: the named point kills the process
    (`stop:<point>`: freezes it there, once, until it is sent SIGCONT)."""

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
        keeps = self.tombstone_retention_seconds
        if self.retention_seconds and keeps and keeps <= self.retention_seconds:
            raise ValueError(
                "JOBGATE_TOMBSTONE_RETENTION_SECONDS must be longer than "
                "JOBGATE_RETENTION_SECONDS (or 0, forever): a replayed key would otherwise "
                "find neither its operation nor its tombstone and start the work again"
            )
        if self.auth == "dev" and not _is_loopback(self.host):
            raise ValueError(
                "JOBGATE_AUTH=dev disables API keys and is only allowed when bound to "
                f"loopback; host {self.host!r} is not"
            )
        return self

    def db_session_settings(self) -> dict[str, str]:
        """The PostgreSQL session settings of every connection (milliseconds; 0 = none)."""
        ms = {
            "lock_timeout": self.db_lock_timeout_seconds,
            "statement_timeout": self.db_statement_timeout_seconds,
            "idle_in_transaction_session_timeout": self.db_idle_in_transaction_timeout_seconds,
        }
        return {name: str(int(seconds * 1000)) for name, seconds in ms.items()}

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
