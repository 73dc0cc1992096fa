"""The provider client: one profile-driven HTTP call in, one classified `CallResult` out.

Every call carries an explicit timeout, the credential the profile names (only to the
profile's own origins: app.providers.calls.prepare), the idempotency token where the profile
says, the trace id and (optionally) the worker id. Provider failures never raise:
timeouts, resets, 5xx, unreadable bodies all become an `Outcome` plus a sanitized
`Exchange` for history. Local refusals (unknown kind, missing credential, an endpoint
the profile lacks, a URL outside the profile's origins) are ``REJECTED`` with
``status_code=None`` and an ``exchange.error``: nothing was sent.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

import httpx2

from app.providers.answers import extract
from app.providers.answers.values import present
from app.providers.calls import lookup as lk
from app.providers.calls import prepare
from app.providers.calls.collect_documents import collect
from app.providers.calls.http_util import classify as classify  # re-exported: tests import it here
from app.providers.calls.http_util import parse_retry_after as parse_retry_after  # likewise
from app.providers.calls.http_util import scrub, secret_variants
from app.providers.calls.prepare import BuildError, Values
from app.providers.calls.types import CallResult, Exchange, LookupResult, NoJobProof, Outcome
from app.providers.calls.wire import WORKER_HEADER as WORKER_HEADER  # re-exported
from app.providers.calls.wire import Raw, Wire, named
from app.providers.expressions import pointers
from app.providers.expressions.pointers import MISSING
from app.providers.language.profile import Endpoint, Profile
from app.providers.language.secrets import Secret
from app.providers.language.spec_requests import CreateEndpoint, PrepareStep


class ProviderClient(Wire):
    """Profile-driven calls over one shared ``httpx2.AsyncClient``."""

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
        """Run the kind's preparation steps, then send its create; OK only with a job id
        (or an inline result)."""
        spec = profile.kinds.get(kind)
        if spec is None:
            return self.refused("create", f"profile {profile.name} has no kind {kind!r}")
        values = Values(
            profile,
            self._env,
            {"input": input, "kind": kind, "client_reference": client_reference, "token": token},
        )
        earlier: list[Exchange] = []
        for step in spec.create.prepare:
            failed = await self._prepare(profile, step, values, trace_id, worker, earlier)
            if failed is not None:
                return failed
        try:
            prepared = prepare.create(profile, spec.create, values)
        except Exception as exc:  # a template mismatch, an input too deep to copy: nothing sent
            why = str(exc) if isinstance(exc, BuildError) else named(exc)
            return replace(self.refused("create", f"cannot build the create: {why}"),
                           extra_exchanges=earlier)  # fmt: skip
        raw = await self.send(profile, prepared, trace_id, worker)
        found = self.observe(profile, raw, require="job_id", create=spec.create)
        return replace(found, extra_exchanges=earlier, no_job=_no_job(profile, raw))

    async def _prepare(
        self,
        profile: Profile,
        step: PrepareStep,
        values: Values,
        trace_id: str,
        worker: str | None,
        earlier: list[Exchange],
    ) -> CallResult | None:
        """One preparation step; its captures join ``values``. A failure is returned: the
        create was not sent, so no job exists (REJECTED; a 429 stays RATE_LIMITED)."""
        try:
            prepared = prepare.request(profile, "prepare", step, values)
        except BuildError as exc:
            return replace(self.refused("prepare", str(exc)), extra_exchanges=list(earlier))
        raw = await self.send(profile, prepared, trace_id, worker)
        captured = {n: present(pointers.get(raw.body, p)) for n, p in step.capture.items()}
        ok = raw.json_ok and all(v is not None for v in captured.values())
        outcome, note = self.outcome(raw, ok=ok, why=f"answer lacks {', '.join(step.capture)}")
        if outcome is Outcome.OK:
            earlier.append(self.exchange(raw, note))
            values.known.update(captured)
            return None
        why = note or raw.error or f"{outcome.value}"
        note = f"preparation step {step.name} failed ({why}); the create was not sent"
        kept = outcome if outcome is Outcome.RATE_LIMITED else Outcome.REJECTED
        # A step that never left (no connection) is the create's own proof: it may go again.
        proof = _no_job(profile, raw) if raw.never_left else None
        return replace(self.base(raw, kept, note), extra_exchanges=list(earlier), no_job=proof)

    async def status(
        self,
        profile: Profile,
        job_id: str,
        *,
        trace_id: str,
        worker: str | None = None,
        status_url: str | None = None,
        input: Any = None,
        kind: str | None = None,
    ) -> CallResult:
        """Read the remote job (at ``status_url`` when the create answer gave one); OK only
        with a readable state. ``input`` and ``kind`` are the operation's, for templates
        that name them (a model id in the path)."""
        known = {"job_id": job_id, "input": input, "kind": kind}
        return await self._call(profile, "status", profile.status, known, trace_id, worker,
                                url=status_url, require="state")  # fmt: skip

    async def cancel(
        self,
        profile: Profile,
        job_id: str,
        *,
        trace_id: str,
        reason: str | None = None,
        worker: str | None = None,
        cancel_url: str | None = None,
        input: Any = None,
        kind: str | None = None,
    ) -> CallResult:
        """Ask the provider to cancel; a 2xx is "accepted", not "cancelled"
        (docs/agent-api.md, "The calls")."""
        ep = profile.cancel
        if ep is None:
            return self.refused("cancel", f"profile {profile.name} cannot cancel")
        known = {"job_id": job_id, "reason": reason, "input": input, "kind": kind}
        return await self._call(profile, "cancel", ep, known, trace_id, worker,
                                url=cancel_url, require=None)  # fmt: skip

    async def result(
        self,
        profile: Profile,
        job_id: str,
        *,
        trace_id: str,
        worker: str | None = None,
        status_url: str | None = None,
        status: CallResult | None = None,
        input: Any = None,
        kind: str | None = None,
    ) -> CallResult:
        """Collect the result: the inline result of a status read, or the profile's result
        documents (JSON or JSON Lines, streamed, bounded by ``max_bytes``). Documents whose
        address comes from the status answer take it from ``status`` when given, else from
        a fresh status read (its exchange is in ``extra_exchanges``)."""
        known = {"job_id": job_id, "input": input, "kind": kind}
        if profile.result is None:  # inline: the status answer is the result document
            return await self._call(profile, "result", profile.status, known, trace_id, worker,
                                    url=status_url, require="state")  # fmt: skip

        async def read_status(
            profile: Profile, job_id: str, trace_id: str, worker: str | None, url: str | None
        ) -> CallResult:
            return await self.status(profile, job_id, trace_id=trace_id, worker=worker,
                                     status_url=url, input=input, kind=kind)  # fmt: skip

        return await collect(self, read_status, profile, known, trace_id, worker, status_url,
                             status)  # fmt: skip

    async def _call(
        self,
        profile: Profile,
        operation: str,
        ep: Endpoint,
        known: dict[str, Any],
        trace_id: str,
        worker: str | None,
        *,
        url: str | None,
        require: str | None,
    ) -> CallResult:
        """One request built from ``ep`` (or at ``url``), read through the profile."""
        try:
            prepared = prepare.request(profile, operation, ep, Values(profile, self.env, known),
                                       url=url)  # fmt: skip
        except BuildError as exc:
            return self.refused(operation, str(exc))
        raw = await self.send(profile, prepared, trace_id, worker)
        return self.observe(profile, raw, require=require)

    async def webhook_secret(
        self, profile: Profile, *, trace_id: str
    ) -> tuple[CallResult | None, Secret | None]:
        """The webhook signing secret: the configured reference when it is set, else asked
        of the provider (``webhooks.secret_fetch``, with the profile's credential). The
        CallResult is the fetch (None when nothing was asked); the secret is scrubbed from
        its exchange like any credential."""
        configured = profile.resolve_webhook_secret(self.env)
        fetch = profile.webhooks.secret_fetch
        if configured is not None or fetch is None:
            return None, configured
        values = Values(profile, self.env)
        ep = Endpoint(method=fetch.method, path=fetch.path)
        try:
            prepared = prepare.request(profile, "webhook_secret", ep, values)
        except BuildError as exc:
            return self.refused("webhook_secret", str(exc)), None
        raw = await self.send(profile, prepared, trace_id, None)
        value = pointers.get(raw.body, fetch.pointer) if raw.json_ok else None
        secret = value if isinstance(value, str) and value else None
        if secret is not None:  # never recorded: scrub it from the exchange first
            raw.variants = secret_variants([*raw.variants, secret])
            raw.text = scrub(raw.text or "", raw.variants)
        outcome, note = self.outcome(raw, ok=secret is not None, why="answer lacks the secret")
        found = self.base(raw, outcome, note)
        return replace(found, body=None), (Secret(secret) if secret else None)

    async def lookup(
        self,
        profile: Profile,
        *,
        token: str | None,
        client_reference: str | None,
        trace_id: str,
        worker: str | None = None,
        since: datetime | None = None,
        input: Any = None,
        kind: str | None = None,
    ) -> LookupResult:
        """Find remote jobs by token or client reference, page by page (app.providers.calls.lookup).

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
        values = Values(profile, self._env, {"input": input, "kind": kind})
        while asked is not None:
            if len(exchanges) == ep.max_pages:
                return LookupResult(Outcome.OK, exchanges, ids, len(exchanges), "max_pages")
            try:
                prepared = prepare.request(
                    profile, "lookup", ep, values, url=asked.url, params=asked.params
                )
            except BuildError as exc:
                return self._refused_lookup(str(exc))
            raw = await self.send(profile, prepared, trace_id, worker)
            jobs = lk.listed(ep, raw.body) if raw.json_ok else None
            outcome, note = self.outcome(raw, ok=jobs is not None, why="no job list")
            found = self.base(raw, outcome, note)
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

    def observe(
        self,
        profile: Profile,
        raw: Raw,
        *,
        require: str | None,
        create: CreateEndpoint | None = None,
    ) -> CallResult:
        """A create, status or cancel answer read through the profile."""
        body = raw.body if raw.json_ok else None
        headers = raw.response.headers if raw.response is not None else httpx2.Headers()
        url = str(raw.request.url) if raw.request is not None else profile.base_url
        seen = extract.seen(profile, body, headers, url, create)
        # What a 2xx must carry to count as OK; cancel (None) needs nothing: the 2xx is the news.
        has = {
            "job_id": seen.job_id is not None,
            "state": raw.json_ok and seen.remote_class is not None,
        }
        ok = has[require] if require else True
        outcome, note = self.outcome(raw, ok=ok, why=f"response lacks the {require}")
        found = replace(
            self.base(raw, outcome, note),
            remote_job_id=seen.job_id,
            remote_state=seen.state,
            remote_class=seen.remote_class,
            progress=seen.progress,
            error=seen.error,
            poll_hint_seconds=seen.poll_hint,
            remote_time=seen.remote_time,
            fields=seen.fields,
            counts=seen.counts,
            items=seen.counts.as_items() if seen.counts else None,
            status_url=seen.status_url,
            cancel_url=seen.cancel_url,
            unreadable=raw.unreadable or seen.unreadable,
        )
        if seen.inline is MISSING or seen.inline is None:
            return found
        found = replace(found, **extract.result_document(profile, seen.inline))
        if profile.counts is not None and profile.counts.source == "result":
            inline_counts = extract.counts_of(profile, seen.inline, "result")
            items = inline_counts.as_items() if inline_counts else None
            found = replace(found, counts=inline_counts, items=items)
        return found

    def _refused_lookup(self, why: str) -> LookupResult:
        refused = self.refused("lookup", why)
        return LookupResult(Outcome.REJECTED, [refused.exchange], stopped="refused")


def _no_job(profile: Profile, raw: Raw) -> NoJobProof | None:
    """Proof that this create made no job: it never left (a failure while connecting),
    or the provider answered a refusal the profile lists (`idempotency.nothing_created`)."""
    if raw.never_left:
        said = scrub(raw.error or "no connection was made", raw.variants)
        return NoJobProof(True, f"the request never reached the provider ({said[:200]})")
    if raw.response is None:
        return None
    body = raw.body if raw.json_ok else None
    rule = profile.idempotency.proves_nothing_created(raw.response.status_code, body, raw.text)
    if rule is None:
        return None
    return NoJobProof(
        False, f"the provider answered {rule.describe()}, which proves nothing was created"
    )
