"""Pure helpers for provider HTTP exchanges, kept free of client state.

Classifying an answer and reading Retry-After (docs/agent-api.md, "Retry rules"), quoting
job-id paths,
scrubbing echoed secrets out of what is recorded, coercing JSON values read through
pointers, and reading a body under a size cap.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

import httpx2

from app.providers.calls.types import Exchange, Outcome
from app.providers.language.secrets import REDACTED


def classify(answer: httpx2.Response | BaseException) -> Outcome:
    """Classify a response or a transport exception (docs/agent-api.md, "Retry rules",
    needs this split).

    2xx OK; 404 NOT_FOUND; 409 CONFLICT; 429 RATE_LIMITED; 408, 5xx (and 1xx/3xx,
    which we never expect) AMBIGUOUS; other 4xx REJECTED. Any exception is
    AMBIGUOUS: for a create it means "the job may exist", which is the safe reading.
    """
    if isinstance(answer, BaseException):
        return Outcome.AMBIGUOUS
    code = answer.status_code
    if 200 <= code < 300:
        return Outcome.OK
    if code == 404:
        return Outcome.NOT_FOUND
    if code == 409:
        return Outcome.CONFLICT
    if code == 429:
        return Outcome.RATE_LIMITED
    if 400 <= code < 500 and code != 408:
        return Outcome.REJECTED
    return Outcome.AMBIGUOUS


# Transport failures raised before any byte of the request was written: httpcore2 raises
# ConnectError / ConnectTimeout only while opening the connection (DNS resolution, TCP
# connect, the TLS handshake) and PoolTimeout only while waiting for a free connection.
# Anything later (WriteError, ReadError, ReadTimeout, RemoteProtocolError, our own
# whole-call timeout) may come after the provider got the request: never proof.
NEVER_LEFT: tuple[type[Exception], ...] = (
    httpx2.ConnectError,
    httpx2.ConnectTimeout,
    httpx2.PoolTimeout,
)


def never_left(exc: BaseException) -> bool:
    """Whether a transport failure proves the request never left this process."""
    return isinstance(exc, NEVER_LEFT)


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Retry-After as seconds: delay-seconds or an HTTP-date relative to ``now``.

    Unparseable values give ``None``; dates in the past give 0.
    """
    if value is None or not value.strip():
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # "-0000" dates are UTC per RFC 5322
            when = when.replace(tzinfo=UTC)
        seconds = (when - now).total_seconds()
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(seconds, 0.0)


def secret_variants(secrets: Iterable[str]) -> list[str]:
    # A provider may echo a secret raw, JSON-escaped or URL-encoded.
    found = {
        v for s in secrets if s for v in (s, json.dumps(s)[1:-1], quote(s, safe=""), quote_plus(s))
    }
    return sorted(found, key=len, reverse=True)


def scrub(text: str, variants: list[str]) -> str:
    for v in variants:
        text = text.replace(v, REDACTED)
    return text


def scrub_json(value: Any, variants: list[str]) -> Any:
    if isinstance(value, str):
        return scrub(value, variants)
    if isinstance(value, list):
        return [scrub_json(v, variants) for v in value]
    if isinstance(value, dict):
        return {scrub(k, variants): scrub_json(v, variants) for k, v in value.items()}
    return value


def _clip(text: str | None, variants: list[str], limit: int) -> str | None:
    if text is None:
        return None
    text = scrub(text, variants)
    return text if len(text) <= limit else f"{text[:limit]}...[truncated {len(text)} chars]"


def _recorded_headers(
    source: httpx2.Headers | None, sensitive: frozenset[str], variants: list[str], limit: int
) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw_name, raw_value in source.raw if source is not None else []:
        # raw keeps the header's original spelling, which reads better in history.
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        shown = REDACTED if name.lower() in sensitive else _clip(value, variants, limit) or ""
        out[name] = f"{out[name]}, {shown}" if name in out else shown
    return out


def record_exchange(
    operation: str,
    req: httpx2.Request | None,
    resp: httpx2.Response | None,
    text: str | None,
    error: str | None,
    duration_ms: float,
    *,
    variants: list[str],
    sensitive: frozenset[str],
    limit: int,
) -> Exchange:
    """The call as history keeps it: sensitive headers redacted, secrets scrubbed.

    Headers named in ``sensitive`` are redacted whole; every other text has the
    secret ``variants`` scrubbed out and is cut to ``limit`` characters.
    """

    def clean(text: str | None) -> str | None:
        return _clip(text, variants, limit)

    def headers(source: httpx2.Headers | None) -> dict[str, str]:
        return _recorded_headers(source, sensitive, variants, limit)

    return Exchange(
        operation=operation,
        method=req.method if req is not None else "",
        url=(clean(str(req.url)) or "") if req is not None else "",
        status_code=resp.status_code if resp is not None else None,
        request_headers=headers(req.headers if req is not None else None),
        request_body=(
            clean(req.content.decode("utf-8", "replace") or None) if req is not None else None
        ),
        response_headers=headers(resp.headers if resp is not None else None),
        response_body=clean(text),
        duration_ms=duration_ms,
        error=clean(error),
    )


def quote_job_id(job_id: str) -> str:
    # Keep "/" for ids like "operations/123", but never let "." or ".." segments walk the path.
    if any(seg in ("", ".", "..") for seg in job_id.split("/")):
        return quote(job_id, safe="").replace(".", "%2E")
    return quote(job_id, safe="/")


async def read_capped(response: httpx2.Response, cap: int) -> tuple[bytes, bool]:
    """Read at most ``cap`` bytes; ``(prefix, False)`` when the body is larger."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            chunks.append(chunk[: max(0, cap - (size - len(chunk)))])
            return b"".join(chunks), False
        chunks.append(chunk)
    return b"".join(chunks), True


def with_query(
    url: str, params: Mapping[str, str] | None, extra: Mapping[str, str]
) -> tuple[str, dict[str, str] | None]:
    """``url`` and ``params`` with ``extra`` added: into the URL's own query when it has
    one (httpx2 replaces a URL's query with ``params``), else beside ``params``."""
    parts = urlsplit(url)
    if parts.query and not params:
        merged = urlencode([*parse_qsl(parts.query, keep_blank_values=True), *extra.items()])
        return urlunsplit(parts._replace(query=merged)), None
    return url, {**(params or {}), **extra}
