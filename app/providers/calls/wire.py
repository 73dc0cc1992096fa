"""The wire under the provider client: send one prepared request, classify its answer.

`Wire.send` adds the credential (only where `prepare` allowed it), the trace and worker
headers and an explicit timeout; reads the answer under a cap, or streams it into a
`LineReader`; and scrubs every secret it knows of before anything is recorded.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx2

from app.core.obs import telemetry, tracecontext
from app.providers.answers import extract
from app.providers.answers.documents import LineReader
from app.providers.calls.http_util import (
    classify,
    never_left,
    parse_retry_after,
    read_capped,
    record_exchange,
    scrub,
    scrub_json,
    secret_variants,
    with_query,
)
from app.providers.calls.prepare import Prepared
from app.providers.calls.types import CallResult, Exchange, Outcome
from app.providers.language.adapter import Adapter, SigningRequest
from app.providers.language.profile import Profile
from app.providers.language.secrets import CredentialError

WORKER_HEADER = "X-Jobgate-Worker"
# Redacted by name whatever the profile says: these carry credentials by convention.
SENSITIVE_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"}
)
ENVELOPE_BYTES = 64 * 1024  # room around a max_bytes result for the JSON envelope


@dataclass
class Raw:
    """What one call produced before it is classified and turned into a CallResult."""

    operation: str
    request: httpx2.Request | None
    response: httpx2.Response | None
    text: str | None
    body: Any
    json_ok: bool
    error: str | None
    duration_ms: float
    variants: list[str]
    sent: bool
    sensitive: frozenset[str]
    retry_hint: float | None = None  # the provider's own delay in an error body (retry_hint)
    never_left: bool = False  # a transport failure before any byte was written (http_util)
    unreadable: str | None = None  # why a body that arrived whole cannot be read (too deep)


class Wire:
    """Sending and classifying, shared by every call of the provider client."""

    def __init__(
        self,
        http: httpx2.AsyncClient,
        env: Mapping[str, str],
        *,
        body_limit: int = 4096,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self._http = http
        self._env = env
        self._limit = body_limit
        self._now = now or (lambda: datetime.now(UTC))

    @property
    def env(self) -> Mapping[str, str]:
        """Where credentials and profile variables are read from."""
        return self._env

    async def send(
        self,
        profile: Profile,
        prepared: Prepared,
        trace_id: str,
        worker: str | None,
        reader: LineReader | None = None,
    ) -> Raw:
        """Send one prepared request: the credential added (where allowed), the answer read
        under a cap (or fed to ``reader`` chunk by chunk), secrets scrubbed."""
        headers = dict(prepared.headers)
        if profile.trace_header:
            headers[profile.trace_header] = trace_id
        parent = tracecontext.outgoing(trace_id)
        if parent is not None:  # W3C Trace Context next to the profile's own trace header
            headers.setdefault(tracecontext.HEADER, parent)
        if worker is not None:
            headers[WORKER_HEADER] = worker
        sensitive = SENSITIVE_HEADERS
        variants: list[str] = []
        try:
            credential = profile.resolve_credential(self._env) if prepared.credentials else None
        except CredentialError as exc:
            return self.refused_raw(prepared.operation, f"CredentialError: {exc}")
        url, params = prepared.url, prepared.params
        if credential is not None:
            variants = secret_variants([credential.secret.reveal()])
            if credential.param is not None:
                url, params = with_query(url, params, {credential.param: credential.value.reveal()})
            else:
                headers[credential.header] = credential.value.reveal()
                sensitive = sensitive | {credential.header.lower()}
        t = profile.timeouts
        try:
            request = self._http.build_request(
                prepared.method,
                url,
                params=params,
                json=prepared.json_body if prepared.has_body else None,
                data=prepared.data,
                files=prepared.files,
                headers=headers,
                timeout=httpx2.Timeout(t.read, connect=t.connect),
            )
            if prepared.files:
                request.read()  # a multipart body is built lazily; history records it
        except Exception as exc:  # e.g. an input that is not JSON: nothing was sent
            why = f"cannot build the request: {named(exc)}"
            return self.refused_raw(prepared.operation, why, variants)
        secret = credential.secret.reveal() if credential is not None else None
        try:
            signed = _signature(profile, request, secret, self._now())
        except Exception as exc:  # the adapter's bug: nothing is sent
            why = f"the adapter's sign failed: {named(exc)}"
            return self.refused_raw(prepared.operation, why, variants)
        if signed:
            for name, value in signed.items():
                request.headers[name] = value
            sensitive = sensitive | {name.lower() for name in signed}
            variants = variants + secret_variants(list(signed.values()))
        cap = profile.validation.max_bytes + ENVELOPE_BYTES
        started = time.perf_counter()
        response: httpx2.Response | None = None
        data, complete, error, unsent = b"", True, None, False
        try:
            # asyncio's own timeout: anyio's cancel scope cost about 2% of the gateway's CPU
            async with asyncio.timeout(t.seconds):
                response = await self._http.send(request, stream=True)
                try:
                    if reader is not None and 200 <= response.status_code < 300:
                        data, complete = await _feed(response, reader)
                    else:
                        data, complete = await read_capped(response, cap)
                finally:
                    await response.aclose()
        except Exception as exc:  # every transport failure is an outcome, never a crash
            response, error, unsent = None, f"{type(exc).__name__}: {exc}", never_left(exc)
        duration = (time.perf_counter() - started) * 1000
        _announce(profile, prepared.operation, request, response, duration, variants, trace_id)
        text = body_json = None
        unreadable: str | None = None
        json_ok = False
        if response is not None:
            text = data.decode(response.charset_encoding or "utf-8", errors="replace")
            if reader is not None and 200 <= response.status_code < 300:
                error = reader.error
            elif not complete:
                error = f"response body exceeds {cap} bytes; not parsed"
            elif data.strip():
                try:
                    body_json, json_ok = json.loads(data), True
                    if variants:
                        scrubbed = scrub_json(body_json, variants)
                        if scrubbed != body_json:
                            # The raw text may hide the secret in \u escapes: record the
                            # clean form.
                            body_json = scrubbed
                            text = json.dumps(scrubbed, ensure_ascii=False)
                except ValueError:
                    body_json, json_ok = None, False
                except RecursionError:  # JSON nested deeper than any reader here goes
                    body_json, json_ok = None, False
                    unreadable = "the answer is JSON nested deeper than jobgate reads"
        hint = None
        if response is not None and response.status_code in (429, 503):
            hint = extract.retry_hint(profile, body_json)
        return Raw(
            prepared.operation, request, response, text, body_json, json_ok, error, duration,
            variants, True, sensitive, hint, unsent, unreadable,
        )  # fmt: skip

    def outcome(self, raw: Raw, *, ok: bool, why: str = "") -> tuple[Outcome, str | None]:
        """Classify the answer; a 2xx that does not carry what the call needs is AMBIGUOUS."""
        if not raw.sent:
            return Outcome.REJECTED, None
        if raw.response is None:
            return Outcome.AMBIGUOUS, None  # transport failure: raw.error says which
        outcome = classify(raw.response)
        if outcome is Outcome.OK and not ok:
            # A 2xx we cannot read proves nothing: for a create, the job may exist.
            reason = "response body is not JSON" if raw.text and not raw.json_ok else why
            return Outcome.AMBIGUOUS, raw.error or reason
        return outcome, None

    def base(self, raw: Raw, outcome: Outcome, note: str | None) -> CallResult:
        """The CallResult every call starts from: outcome, exchange, body, retry delay."""
        response = raw.response
        retry_after = None
        if response is not None:
            retry_after = parse_retry_after(response.headers.get("Retry-After"), self._now())
            if retry_after is None:
                retry_after = raw.retry_hint
        return CallResult(
            outcome=outcome,
            exchange=self.exchange(raw, note),
            body=raw.body if raw.json_ok else None,
            retry_after_seconds=retry_after,
        )

    def exchange(self, raw: Raw, note: str | None) -> Exchange:
        return record_exchange(
            raw.operation, raw.request, raw.response, raw.text, note or raw.error,
            raw.duration_ms, variants=raw.variants, sensitive=raw.sensitive, limit=self._limit,
        )  # fmt: skip

    def refused_raw(self, operation: str, why: str, variants: list[str] | None = None) -> Raw:
        return Raw(
            operation, None, None, None, None, False, why, 0.0, variants or [], False,
            SENSITIVE_HEADERS,
        )  # fmt: skip

    def refused(self, operation: str, why: str) -> CallResult:
        """A local refusal: nothing was sent."""
        return self.base(self.refused_raw(operation, why), Outcome.REJECTED, None)


def _signature(
    profile: Profile, request: httpx2.Request, secret: str | None, now: datetime
) -> Mapping[str, str] | None:
    """The headers the profile's adapter signs ``request`` with (docs/profiles.md,
    "Python adapters"), or None."""
    if type(profile.hooks).sign is Adapter.sign:  # no signing hook: nothing to build
        return None
    seen = SigningRequest(
        request.method, str(request.url), dict(request.headers), request.read(), secret, now
    )  # fmt: skip
    return profile.hooks.sign(seen)


async def _feed(response: httpx2.Response, reader: LineReader) -> tuple[bytes, bool]:
    """Stream a body into ``reader``; (its head for the record, whether it was read whole)."""
    async for chunk in response.aiter_bytes():
        if not reader.feed(chunk):
            return bytes(reader.head), False
    reader.finish()
    return bytes(reader.head), reader.error is None


def named(exc: Exception) -> str:
    """An exception as a short line for history: its class and the start of its message."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _announce(
    profile: Profile,
    operation: str,
    request: httpx2.Request,
    response: httpx2.Response | None,
    duration_ms: float,
    variants: list[str],
    trace_id: str,
) -> None:
    """The provider-call log line, metrics and span: scheme, host and path only (no query,
    no headers), scrubbed of every secret variant in case a profile templates one into a
    path. The span takes the span id of the `traceparent` the request carried."""
    target = scrub(str(request.url.copy_with(query=None, fragment=None)), variants)
    telemetry.provider_call(
        profile.name,
        operation,
        method=request.method,
        target=target,
        status=response.status_code if response is not None else None,
        outcome=classify(response).value if response is not None else "transport_error",
        seconds=duration_ms / 1000,
        trace_id=trace_id,
        traceparent=request.headers.get(tracecontext.HEADER),
    )
