"""The webhook signing secret a profile verifies with: configured, or asked of the provider.

A configured reference (`webhooks.secret`) always wins and is read on each event, as
credentials are. Without one, a profile with `webhooks.secret_fetch` (Replicate's
`GET /v1/webhooks/default/secret`) has the secret fetched through the provider client,
once, and kept per profile for the life of the process. A signature that does not
match a fetched secret may mean the provider rotated it, so the caller may ask for it
again (`refetch`).

Whoever sends a webhook is anonymous until it verifies, and every fetch is a call
with the operator's credential: so every fetch of a profile's secret, the first, a
retry after a failure or a refetch, happens at most once per `REFETCH_MIN_SECONDS`,
whatever the callers. A failed fetch is remembered for that long and answered from
memory; a stream of events (forged or not) is never a stream of provider calls.

The value lives only in a `Secret`; nothing here logs or returns it in clear.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime

from app.operations.context import AppContext
from app.providers.language.profile import Profile
from app.providers.language.secrets import Secret

log = logging.getLogger("jobgate.webhooks.secrets")

REFETCH_MIN_SECONDS = 60.0  # a fetched secret is asked for again at most this often


@dataclass(frozen=True)
class Found:
    """The secret to verify with (None: none configured and none could be fetched);
    `fetched` says it came from the provider (so a mismatch may be a rotation), `why`
    says in plain words why there is none."""

    secret: Secret | None
    fetched: bool
    why: str | None = None


@dataclass
class _Entry:
    secret: Secret
    at: datetime


class WebhookSecrets:
    """Fetched webhook secrets of one process, per profile name."""

    def __init__(self) -> None:
        self._cache: dict[str, _Entry] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._asked: dict[str, datetime] = {}  # when each profile's secret was last fetched
        self._failed: dict[str, Found] = {}  # the last fetch's failure, while it counts

    async def get(self, ctx: AppContext, profile: Profile, *, trace_id: str) -> Found:
        """The configured secret, else the cached fetched one, else one fetch now."""
        configured = profile.resolve_webhook_secret(ctx.env)
        if configured is not None or profile.webhooks.secret_fetch is None:
            why = None if configured else "not configured, and the provider serves none"
            return Found(configured, fetched=False, why=why)
        async with self._lock(profile.name):
            entry = self._cache.get(profile.name)
            if entry is not None:
                return Found(entry.secret, fetched=True)
            failed = self._failed.get(profile.name)
            if failed is not None and not self._may_ask(ctx, profile.name):
                return failed  # asked recently and it failed: not again yet
            return await self._fetch(ctx, profile, trace_id)

    async def refetch(
        self, ctx: AppContext, profile: Profile, stale: Secret, *, trace_id: str
    ) -> Secret | None:
        """A fresh secret after `stale` failed to verify, if the provider now serves a
        different one and the last fetch is old enough; else None (nothing to retry)."""
        async with self._lock(profile.name):
            entry = self._cache.get(profile.name)
            if entry is not None and entry.secret.reveal() != stale.reveal():
                return entry.secret  # another event already fetched the new one
            if not self._may_ask(ctx, profile.name):
                return None
            found = await self._fetch(ctx, profile, trace_id)
        if found.secret is None or found.secret.reveal() == stale.reveal():
            return None
        return found.secret

    def forget(self) -> None:
        """Drop every fetched secret and failure (the next event fetches again)."""
        self._cache.clear()
        self._failed.clear()
        self._asked.clear()

    def _may_ask(self, ctx: AppContext, name: str) -> bool:
        asked = self._asked.get(name)
        return asked is None or (ctx.now() - asked).total_seconds() >= REFETCH_MIN_SECONDS

    async def _fetch(self, ctx: AppContext, profile: Profile, trace_id: str) -> Found:
        self._asked[profile.name] = ctx.now()
        call, secret = await ctx.client.webhook_secret(profile, trace_id=trace_id)
        if secret is None:
            outcome = call.outcome.value if call is not None else "not asked"
            status = call.exchange.status_code if call is not None else None
            # The exchange is scrubbed of the credential; the note names no secret.
            log.warning(
                "webhook secret for %s could not be fetched (%s, HTTP %s)",
                profile.name,
                outcome,
                status,
            )
            why = f"not configured, and fetching it from the provider failed ({outcome})"
            failed = Found(None, fetched=True, why=why)
            self._failed[profile.name] = failed
            return failed
        self._failed.pop(profile.name, None)
        self._cache[profile.name] = _Entry(secret, ctx.now())
        log.info("webhook secret for %s fetched from the provider", profile.name)
        return Found(secret, fetched=True)

    def _lock(self, name: str) -> asyncio.Lock:
        return self._locks.setdefault(name, asyncio.Lock())
