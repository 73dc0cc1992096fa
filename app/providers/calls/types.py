"""What a provider call returns to the rest of jobgate: classified, sanitized outcomes.

The provider client turns every HTTP exchange into a `CallResult`. Callers never
see raw httpx2 objects, credentials or unbounded bodies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from app.providers.answers.documents import DocumentInfo
from app.providers.answers.extract import Progress
from app.providers.language.counts import Counts
from app.providers.language.words import RemoteClass


class Outcome(StrEnum):
    """How one provider call ended, from the gateway's point of view."""

    OK = "ok"  # a 2xx with a body we could read
    REJECTED = "rejected"  # a definitive 4xx: the provider refused, retrying is pointless
    AMBIGUOUS = "ambiguous"  # timeout, reset, 5xx: the effect may or may not have happened
    RATE_LIMITED = "rate_limited"  # 429 (Retry-After in retry_after_seconds)
    NOT_FOUND = "not_found"  # 404 on a job or result
    CONFLICT = "conflict"  # 409: e.g. cancel of a finished job, result not ready


@dataclass(frozen=True)
class Exchange:
    """Sanitized record of one HTTP exchange, safe to store in history."""

    operation: str  # create | status | cancel | result | lookup
    method: str
    url: str  # without query-string secrets
    status_code: int | None
    request_headers: dict[str, str]  # credentials redacted
    request_body: str | None  # truncated
    response_headers: dict[str, str]
    response_body: str | None  # truncated
    duration_ms: float
    error: str | None = None  # exception class and message for transport failures

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict for the history table."""
        return {
            "operation": self.operation,
            "method": self.method,
            "url": self.url,
            "status_code": self.status_code,
            "request_headers": self.request_headers,
            "request_body": self.request_body,
            "response_headers": self.response_headers,
            "response_body": self.response_body,
            "duration_ms": round(self.duration_ms, 2),
            "error": self.error,
        }


@dataclass(frozen=True)
class NoJobProof:
    """Why a create certainly made no remote job (docs/single-create.md): its request
    never left this process (`not_sent`: no connection was made), or the provider
    answered with a refusal the profile lists under `idempotency.nothing_created`."""

    not_sent: bool
    why: str  # in words: the transport failure, or the answer and the rule it matched


@dataclass(frozen=True)
class CallResult:
    """A classified provider answer with the fields the profile's pointers extract."""

    outcome: Outcome
    exchange: Exchange
    body: Any = None  # parsed JSON body (may be None)
    remote_job_id: str | None = None
    remote_state: str | None = None  # the provider's own word
    remote_class: RemoteClass | None = None  # mapped through the profile
    progress: Progress | None = None
    result: Any = None  # result payload (status body inline or result endpoint)
    result_sha256: str | None = None  # checksum the provider claims for the result
    items: dict[str, int] | None = None  # processed / succeeded / failed counts
    failed_items: list[Any] = field(default_factory=list)
    error: dict[str, Any] | None = None  # provider's error object, if any
    retry_after_seconds: float | None = None  # Retry-After header, seconds (date parsed)
    poll_hint_seconds: float | None = None  # provider's own poll hint from the body
    remote_time: str | None = None  # provider's timestamp for the state it reports
    job_ids: list[str] = field(default_factory=list)  # lookup: matching job ids, oldest first
    # Profile language v2 (docs/profiles.md, "Driver integration"):
    status_url: str | None = None  # create: where the provider says to read the job
    cancel_url: str | None = None  # create: where the provider says to cancel it
    fields: dict[str, Any] = field(default_factory=dict)  # pointers.fields read from the answer
    counts: Counts | None = None  # total / succeeded / failed / not_processed
    documents: list[DocumentInfo] = field(default_factory=list)  # result: what was read
    extra_exchanges: list[Exchange] = field(default_factory=list)  # earlier calls, in order
    no_job: NoJobProof | None = None  # create: proof that it made no job (may be sent again)
    # A 2xx answer that arrived whole but holds what no reader can keep (JSON nested too
    # deep to parse, a progress of 10^30): why, in words. The provider broke its contract.
    unreadable: str | None = None


LookupStop = Literal["end", "window", "max_pages", "error", "refused"]


@dataclass(frozen=True)
class LookupResult:
    """A lookup, however many pages it read: every page's exchange and the matching ids.

    ``outcome`` is OK only when every page read was answered and readable; ``stopped``
    says why paging ended (the last page, the look-back window, the page limit, or
    the failed page)."""

    outcome: Outcome
    exchanges: list[Exchange]
    job_ids: list[str] = field(default_factory=list)  # matches, in listing order, no repeats
    pages: int = 0
    stopped: LookupStop = "end"
    retry_after_seconds: float | None = None
    poll_hint_seconds: float | None = None  # lookups carry no hint; kept for the backoff
