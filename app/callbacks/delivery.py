"""The delivery loop of completion callbacks: claim due outbox rows, POST, record.

A thin shell like the observer: `tick()` is what tests drive with a fake clock,
`run()` only repeats it. Delivery is at-least-once: a worker that dies after the
receiver answered but before recording will have the event sent again when its
lease lapses, with the same `webhook-id`, which is what receivers de-duplicate on.
Every event is signed per Standard Webhooks when `JOBGATE_CALLBACK_SECRET` is set.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx2
from standardwebhooks.webhooks import Webhook

from app import audit
from app.callbacks import outbox
from app.callbacks.outbox import Claimed
from app.core.http.ssrf import CallbackForbidden, Pinned, pin
from app.core.obs import telemetry
from app.operations import repository as ops_repo
from app.operations.context import AppContext

log = logging.getLogger(__name__)

CLAIM_BATCH = 50  # outbox rows claimed per tick
CONCURRENCY = 16  # deliveries in flight at once per process
CLAIM_LEASE_SECONDS = 60.0  # real seconds; longer than one attempt can take
ATTEMPT_TIMEOUT = httpx2.Timeout(10.0, connect=5.0)  # seconds, per attempt
FIRST_RETRY_SECONDS = 10.0  # delay after the first failure (scaled by time_scale)
RETRY_FACTOR = 2.0
RETRY_CAP_SECONDS = 3600.0  # no retry waits longer than this (scaled)
MAX_ATTEMPTS = 12  # then the event is marked failed (given up) and history says so
RESPONSE_BODY_CHARS = 500  # receiver answers kept on the attempt row


def retry_delay(attempt: int, time_scale: float) -> float:
    """Capped exponential backoff after failed attempt number `attempt` (1-based)."""
    return min(FIRST_RETRY_SECONDS * RETRY_FACTOR ** (attempt - 1), RETRY_CAP_SECONDS) * time_scale


def signed_headers(
    signer: Webhook | None, event_id: str, body: str, at: datetime
) -> dict[str, str]:
    """Standard Webhooks headers; without a secret the signature header is left out."""
    headers = {
        "content-type": "application/json",
        "user-agent": "jobgate-callbacks/1",
        "webhook-id": event_id,
        "webhook-timestamp": str(int(at.timestamp())),
    }
    if signer is not None:
        headers["webhook-signature"] = signer.sign(event_id, at, body)
    return headers


class CallbackDelivery:
    """One delivery worker; any number may share a database."""

    def __init__(self, ctx: AppContext, http: httpx2.AsyncClient) -> None:
        self.ctx = ctx
        self.http = http
        self.interval = ctx.settings.callback_interval_seconds
        secret = ctx.settings.callback_secret
        # Built now so a malformed secret stops start-up instead of every delivery.
        self.signer = Webhook(secret) if secret else None
        if self.signer is None:
            log.warning("JOBGATE_CALLBACK_SECRET is unset: completion callbacks go out unsigned")
        self._sem = asyncio.Semaphore(CONCURRENCY)
        self._stopping = asyncio.Event()

    @property
    def owner(self) -> str:
        return f"{self.ctx.worker_id}/callbacks"

    async def tick(self) -> int:
        """Claim one batch of due events and attempt each once; returns how many."""
        ctx = self.ctx
        async with ctx.db.transaction() as txn:
            claims = await outbox.claim_due(
                txn,
                now=ctx.now(),
                owner=self.owner,
                lease_seconds=CLAIM_LEASE_SECONDS,
                limit=CLAIM_BATCH,
                skip_locked=not ctx.db.is_sqlite,
            )

        async def one(claim: Claimed) -> None:
            async with self._sem:
                try:
                    await self.attempt(claim)
                except Exception:  # one bad event must not stop the others
                    log.exception("delivering %s failed", claim.event_id)

        if claims:
            await asyncio.gather(*(one(c) for c in claims))
        return len(claims)

    async def attempt(self, claim: Claimed) -> None:
        """One POST of one claimed event, then its attempt row in one transaction."""
        ctx = self.ctx
        body = json.dumps(claim.payload, separators=(",", ":"), ensure_ascii=False)
        status: int | None = None
        text: str | None = None
        error: str | None = None
        started = time.perf_counter()
        forbidden = False
        try:
            # Resolved and checked once, then connected to that address (app/core/http/ssrf.py):
            # a second lookup by the client could answer an internal one.
            target = (
                Pinned(claim.url, "")
                if ctx.settings.allow_private_callbacks
                else await pin(claim.url, resolver=ctx.resolver)
            )
            headers = signed_headers(self.signer, claim.event_id, body, ctx.now())
            if target.host:
                headers["host"] = target.host
            response = await self.http.post(
                target.url,
                content=body.encode(),
                headers=headers,
                timeout=ATTEMPT_TIMEOUT,
                follow_redirects=False,  # a redirect could point anywhere, e.g. inside
                extensions=target.extensions,
            )
            status, text = response.status_code, response.text[:RESPONSE_BODY_CHARS]
            if not 200 <= status < 300:
                error = f"receiver answered HTTP {status}"
        except CallbackForbidden as exc:
            forbidden, error = True, f"refused: {exc}"
        except httpx2.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:RESPONSE_BODY_CHARS]
        duration_ms = (time.perf_counter() - started) * 1000
        await self._record(claim, status, text, error, duration_ms, forbidden)

    async def _record(
        self,
        claim: Claimed,
        status: int | None,
        text: str | None,
        error: str | None,
        duration_ms: float,
        forbidden: bool,
    ) -> None:
        ctx = self.ctx
        now = ctx.now()
        if error is None:
            outcome, next_at = "delivered", None
        elif forbidden or claim.attempt >= MAX_ATTEMPTS:
            outcome, next_at = "gave_up", None
        else:
            delay = retry_delay(claim.attempt, ctx.settings.time_scale)
            outcome, next_at = "retry", now + timedelta(seconds=delay)
        async with ctx.db.transaction() as txn:
            ours = await outbox.record_attempt(
                txn,
                claim,
                at=now,
                status_code=status,
                error=error,
                response_body=text,
                duration_ms=duration_ms,
                outcome=outcome,
                next_attempt_at=next_at,
            )
            if ours:  # every attempt is audited; the outcome also goes to history below
                audit.record(
                    txn,
                    kind="callback_attempt",
                    at=now,
                    actor=f"callbacks:{ctx.worker_id}",
                    operation_id=claim.operation_id,
                    payload={
                        **_history_data(claim, status, error),
                        "outcome": outcome,
                        "next_attempt_at": next_at.isoformat() if next_at else None,
                    },
                )
            if ours and outcome != "retry":
                await ops_repo.append_history(
                    txn,
                    operation_id=claim.operation_id,
                    at=now,
                    kind="callback",
                    actor=f"callbacks:{ctx.worker_id}",
                    cause=(
                        f"completion callback delivered on attempt {claim.attempt}"
                        if outcome == "delivered"
                        else f"completion callback given up after attempt {claim.attempt}"
                    ),
                    data=_history_data(claim, status, error),
                )
        telemetry.callback_attempt(
            claim.operation_id, _trace_of(claim), outcome, claim.attempt, status
        )

    async def run(self) -> None:
        """Tick until `stop()`; sleeps `callback_interval_seconds` when nothing is due."""
        while not self._stopping.is_set():
            try:
                n = await self.tick()
            except Exception:
                log.exception("callback delivery tick failed")
                n = 0
            if n >= CLAIM_BATCH:
                continue  # more may be due right now
            try:
                await asyncio.wait_for(self._stopping.wait(), timeout=self.interval)
            except TimeoutError:
                pass

    def stop(self) -> None:
        self._stopping.set()


def _history_data(claim: Claimed, status: int | None, error: str | None) -> dict[str, Any]:
    # The query string may carry the receiver's token: history keeps only where it went.
    parts = urlsplit(claim.url)
    return {
        "event_id": claim.event_id,
        "url": f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}",
        "attempts": claim.attempt,
        "status_code": status,
        "error": error,
    }


def _trace_of(claim: Claimed) -> str | None:
    """The operation's trace id, from the operation body the event carries."""
    data = claim.payload.get("data") if isinstance(claim.payload, dict) else None
    trace = data.get("trace_id") if isinstance(data, dict) else None
    return trace if isinstance(trace, str) else None
