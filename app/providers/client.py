"""The provider client: one profile-driven HTTP call in, one classified `CallResult` out.

Every call carries an explicit timeout, the credential the profile names, the
idempotency token where the profile says, the trace id and (optionally) the
worker id. Provider failures never raise: timeouts, resets, 5xx, unreadable
bodies all become an `Outcome` plus a sanitized `Exchange` for history. Local
refusals (unknown kind, missing credential, an endpoint the profile lacks) are
``REJECTED`` with ``status_code=None`` and an ``exchange.error``: nothing was sent.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import anyio
import httpx

from app.providers import lookup as lk
from app.providers import pointers
from app.providers.http_util import (
    as_int,
    as_seconds,
    as_str,
    present,
    quote_job_id,
    read_capped,
    record_exchange,
    render,
    scrub_json,
    secret_variants,
)
from app.providers.http_util import classify as classify  # re-exported: tests import it here
from app.providers.http_util import parse_retry_after as parse_retry_after  # likewise
from app.providers.pointers import MISSING
from app.providers.profile import Endpoint, Profile
from app.providers.secrets import CredentialError
from app.providers.types import CallResult, Exchange, LookupResult, Outcome, Progress

WORKER_HEADER = "X-Jobgate-Worker"
# Redacted by name whatever the profile says: these carry credentials by convention.
SENSITIVE_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"}
)
_ENVELOPE_BYTES = 64 * 1024  # room around a max_bytes result for the JSON envelope


@dataclass
class _Raw:
    """What one call produced before it is classified and turned into a CallResult."""

    operation: str
    request: httpx.Request | None
    response: httpx.Response | None
    text: str | None
    body: Any
    json_ok: bool
    error: str | None
    duration_ms: float
    variants: list[str]
    sent: bool
    sensitive: frozenset[str]


class ProviderClient:
    """Profile-driven calls over one shared ``httpx.AsyncClient``."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        env: Mapping[str, str],
        *,
        body_limit: int = 4096,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self._http = http
        self._env = env
        self._limit = body_limit
        self._now = now or (lambda: datetime.now(UTC))

    async def create(
        self,
        profile: Profile,
        kind: str,
        input: Any,
        *,
        token: str,
        client_reference: str | None,
        trace_id: str,
        worker: str | None = None,
    ) -> CallResult:
        """Send the create call for ``kind``; OK only with a readable job id."""
        spec = profile.kinds.get(kind)
        if spec is None:
            return self._refused("create", f"profile {profile.name} has no kind {kind!r}")
        ep = spec.create
        values = {
            "$input": input,
            "$kind": kind,
            "$client_reference": client_reference,
            "$token": token,
        }
        headers: dict[str, str] = {}
        idem, ref = profile.idempotency, profile.client_reference
        query = {idem.param: token} if idem.location == "query" and idem.param else None
        try:
            body = copy.deepcopy(input) if ep.body is None else render(ep.body, values)
            if idem.location == "header" and idem.header:
                headers[idem.header] = token
            elif idem.location == "body" and idem.pointer:
                pointers.set_value(body, idem.pointer, token)
            if ref.location != "none" and ref.pointer and client_reference is not None:
                pointers.set_value(body, ref.pointer, client_reference)
        except Exception as exc:  # a template mismatch, an input too deep to copy: nothing sent
            return self._refused("create", f"cannot build the create body: {_named(exc)}")
        raw = await self._call(profile, "create", ep, None, trace_id, worker, body, headers, query)
        return self._observation(profile, raw, require="job_id")

    async def status(
        self, profile: Profile, job_id: str, *, trace_id: str, worker: str | None = None
    ) -> CallResult:
        """Read the remote job; OK only with a readable state."""
        raw = await self._call(profile, "status", profile.status, job_id, trace_id, worker)
        return self._observation(profile, raw, require="state")

    async def cancel(
        self,
        profile: Profile,
        job_id: str,
        *,
        trace_id: str,
        reason: str | None = None,
        worker: str | None = None,
    ) -> CallResult:
        """Ask the provider to cancel; a 2xx is "accepted", not "cancelled" (SPEC 1.3)."""
        ep = profile.cancel
        if ep is None:
            return self._refused("cancel", f"profile {profile.name} cannot cancel")
        body = None if ep.body is None else render(ep.body, {"$reason": reason, "$job_id": job_id})
        raw = await self._call(profile, "cancel", ep, job_id, trace_id, worker, body)
        return self._observation(profile, raw, require=None)

    async def result(
        self, profile: Profile, job_id: str, *, trace_id: str, worker: str | None = None
    ) -> CallResult:
        """Fetch the result document (the result endpoint, or the status body inline)."""
        if profile.result is None:
            # The result is inline in the status body (pointers.inline_result).
            raw = await self._call(profile, "result", profile.status, job_id, trace_id, worker)
            return self._observation(profile, raw, require="state")
        raw = await self._call(profile, "result", profile.result, job_id, trace_id, worker)
        found = self._observation(profile, raw, require="json")
        return self._with_result(profile, found, raw.body if raw.json_ok else None)

    async def lookup(
        self,
        profile: Profile,
        *,
        token: str | None,
        client_reference: str | None,
        trace_id: str,
        worker: str | None = None,
        since: datetime | None = None,
    ) -> LookupResult:
        """Find remote jobs by token or client reference, page by page (app.providers.lookup).

        ``since`` is the start of the look-back window (the intent time minus the
        profile's clock-skew margin): a newest-first listing stops at the first page
        entirely older than that. ``job_ids`` are the matches in listing order.
        """
        ep = profile.lookup
        if ep is None:
            return self._refused_lookup(f"profile {profile.name} has no lookup")
        key = token if ep.by == "token" else client_reference
        if key is None:
            return self._refused_lookup(f"lookup by {ep.by} needs a {ep.by}")
        asked: lk.PageRequest | None = lk.first_page(ep, key)
        exchanges: list[Exchange] = []
        ids: list[str] = []
        while asked is not None:
            if len(exchanges) == ep.max_pages:
                return LookupResult(Outcome.OK, exchanges, ids, len(exchanges), "max_pages")
            raw = await self._call(
                profile,
                "lookup",
                ep,
                None,
                trace_id,
                worker,
                params=asked.params or None,
                url=asked.url,
            )
            jobs = lk.listed(ep, raw.body) if raw.json_ok else None
            outcome, note = self._outcome(raw, ok=jobs is not None, why="no job list")
            found = self._base(raw, outcome, note)
            exchanges.append(found.exchange)
            if outcome != Outcome.OK or jobs is None:
                return LookupResult(
                    outcome, exchanges, ids, len(exchanges), "error", found.retry_after_seconds
                )
            ids += [i for i in lk.matching_ids(ep, jobs, client_reference) if i not in ids]
            if lk.before_window(ep, jobs, since):
                return LookupResult(Outcome.OK, exchanges, ids, len(exchanges), "window")
            asked = lk.next_page(ep, profile.base_url, asked, raw.body, jobs)
        return LookupResult(Outcome.OK, exchanges, ids, len(exchanges), "end")

    # -- internals -------------------------------------------------------------------------

    async def _call(
        self,
        profile: Profile,
        operation: str,
        ep: Endpoint,
        job_id: str | None,
        trace_id: str,
        worker: str | None,
        body: Any = None,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
        url: str | None = None,  # a whole URL instead of base_url + path (a next-page link)
    ) -> _Raw:
        headers = {"Accept": "application/json", **(headers or {})}
        if profile.trace_header:
            headers[profile.trace_header] = trace_id
        if worker is not None:
            headers[WORKER_HEADER] = worker
        sensitive = SENSITIVE_HEADERS
        try:
            credential = profile.resolve_credential(self._env)
        except CredentialError as exc:
            return self._refused_raw(operation, f"CredentialError: {exc}")
        variants: list[str] = []
        if credential is not None:
            headers[credential.header] = credential.value.reveal()
            sensitive = sensitive | {credential.header.lower()}
            variants = secret_variants([credential.secret.reveal()])
        path = ep.path.replace("{job_id}", quote_job_id(job_id or ""))
        t = profile.timeouts
        try:
            request = self._http.build_request(
                ep.method,
                url or profile.base_url.rstrip("/") + path,
                params=params,
                json=body,
                headers=headers,
                timeout=httpx.Timeout(t.read, connect=t.connect),
            )
        except Exception as exc:  # e.g. an input that is not JSON: nothing was sent
            return self._refused_raw(
                operation, f"cannot build the request: {_named(exc)}", variants
            )
        cap = profile.validation.max_bytes + _ENVELOPE_BYTES
        started = time.perf_counter()
        response: httpx.Response | None = None
        data, complete, error = b"", True, None
        try:
            with anyio.fail_after(t.seconds):
                response = await self._http.send(request, stream=True)
                try:
                    data, complete = await read_capped(response, cap)
                finally:
                    await response.aclose()
        except Exception as exc:  # every transport failure is an outcome, never a crash
            response, error = None, f"{type(exc).__name__}: {exc}"
        duration = (time.perf_counter() - started) * 1000
        text = body_json = None
        json_ok = False
        if response is not None:
            text = data.decode(response.charset_encoding or "utf-8", errors="replace")
            if not complete:
                error = f"response body exceeds {cap} bytes; not parsed"
            else:
                try:
                    body_json, json_ok = json.loads(data), True
                except ValueError:
                    pass
                if json_ok and variants:
                    scrubbed = scrub_json(body_json, variants)
                    if scrubbed != body_json:
                        # The raw text may hide the secret in \u escapes: record the clean form.
                        body_json, text = scrubbed, json.dumps(scrubbed, ensure_ascii=False)
        return _Raw(
            operation, request, response, text, body_json, json_ok, error, duration, variants,
            True, sensitive,
        )  # fmt: skip

    def _outcome(self, raw: _Raw, *, ok: bool, why: str = "") -> tuple[Outcome, str | None]:
        if not raw.sent:
            return Outcome.REJECTED, None
        if raw.response is None:
            return Outcome.AMBIGUOUS, None  # transport failure: raw.error says which
        outcome = classify(raw.response)
        if outcome is Outcome.OK and not ok:
            # A 2xx we cannot read proves nothing: for a create, the job may exist.
            reason = why if raw.json_ok else "response body is not JSON"
            return Outcome.AMBIGUOUS, raw.error or reason
        return outcome, None

    def _observation(self, profile: Profile, raw: _Raw, *, require: str | None) -> CallResult:
        p = profile.pointers
        body = raw.body if raw.json_ok else None
        job_id = as_str(pointers.get(body, p.job_id))
        state = as_str(pointers.get(body, p.state))
        # What a 2xx must carry to count as OK; cancel (None) needs nothing: the 2xx is the news.
        checks = {
            "job_id": job_id is not None,
            "state": state is not None,
            "json": True,
            None: True,
        }
        ok = checks[require] and (raw.json_ok or require is None)
        outcome, note = self._outcome(raw, ok=ok, why=f"response lacks the {require}")
        completed = as_int(pointers.get(body, p.progress_completed))
        total = as_int(pointers.get(body, p.progress_total))
        error = present(pointers.get(body, p.error))
        found = _replace(
            self._base(raw, outcome, note),
            remote_job_id=job_id,
            remote_state=state,
            remote_class=profile.remote_class(state) if state is not None else None,
            progress=None if completed is None and total is None else Progress(completed, total),
            error=error if isinstance(error, dict) else ({"message": error} if error else None),
            poll_hint_seconds=as_seconds(pointers.get(body, p.poll_hint)),
            remote_time=as_str(pointers.get(body, p.remote_time)),
        )
        inline = pointers.get(body, p.inline_result)
        return found if inline is MISSING or inline is None else self._with_result(
            profile, found, inline
        )  # fmt: skip

    def _with_result(self, profile: Profile, found: CallResult, doc: Any) -> CallResult:
        rp = profile.pointers.result
        counts = {"processed": rp.processed, "succeeded": rp.succeeded, "failed": rp.failed}
        items = {
            name: n
            for name, ptr in counts.items()
            if (n := as_int(pointers.get(doc, ptr))) is not None
        }
        failed_items = pointers.get(doc, rp.failed_items)
        return _replace(
            found,
            result=present(pointers.get(doc, rp.data)),
            result_sha256=as_str(pointers.get(doc, rp.sha256)),
            items=items or None,
            failed_items=failed_items if isinstance(failed_items, list) else [],
        )

    def _base(self, raw: _Raw, outcome: Outcome, note: str | None) -> CallResult:
        response = raw.response
        retry_after = None
        if response is not None:
            retry_after = parse_retry_after(response.headers.get("Retry-After"), self._now())
        return CallResult(
            outcome=outcome,
            exchange=self._exchange(raw, note),
            body=raw.body if raw.json_ok else None,
            retry_after_seconds=retry_after,
        )

    def _exchange(self, raw: _Raw, note: str | None) -> Exchange:
        return record_exchange(
            raw.operation, raw.request, raw.response, raw.text, note or raw.error,
            raw.duration_ms, variants=raw.variants, sensitive=raw.sensitive, limit=self._limit,
        )  # fmt: skip

    def _refused_raw(self, operation: str, why: str, variants: list[str] | None = None) -> _Raw:
        return _Raw(
            operation, None, None, None, None, False, why, 0.0, variants or [], False,
            SENSITIVE_HEADERS,
        )  # fmt: skip

    def _refused(self, operation: str, why: str) -> CallResult:
        return self._base(self._refused_raw(operation, why), Outcome.REJECTED, None)

    def _refused_lookup(self, why: str) -> LookupResult:
        refused = self._refused("lookup", why)
        return LookupResult(Outcome.REJECTED, [refused.exchange], stopped="refused")


def _named(exc: Exception) -> str:
    """An exception as a short line for history: its class and the start of its message."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _replace(found: CallResult, **changes: Any) -> CallResult:
    return replace(found, **changes)
