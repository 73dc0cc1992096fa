"""The webhook signing secret a profile verifies with: configured, or asked of the provider.

A configured reference (`webhooks.secret`) always wins and is read on each event, as
credentials are. Without one, a profile with `webhooks.secret_fetch` (Replicate's
`GET /v1/webhooks/default/secret`) has the secret fetched through the provider client,
once, and kept per profile for the life of the process. A signature that does not
match a fetched secret may mean the provider rotated it, so the caller may ask for it
again (`refetch`), at most once per `REFETCH_MIN_SECONDS` per profile: a stream of
forged events must not become a stream of provider calls.

The value lives only in a `Secret`; nothing here logs or returns it in clear.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime

from app.core.context import AppContext
from app.providers.profile import Profile
from app.providers.secrets import Secret

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
            if entry is not None and _age(ctx, entry) < REFETCH_MIN_SECONDS:
                return None
            found = await self._fetch(ctx, profile, trace_id)
        if found.secret is None or found.secret.reveal() == stale.reveal():
            return None
        return found.secret

    def forget(self) -> None:
        """Drop every fetched secret (the next event fetches again)."""
        self._cache.clear()

    async def _fetch(self, ctx: AppContext, profile: Profile, trace_id: str) -> Found:
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
            return Found(None, fetched=True, why=why)
        self._cache[profile.name] = _Entry(secret, ctx.now())
        log.info("webhook secret for %s fetched from the provider", profile.name)
        return Found(secret, fetched=True)

    def _lock(self, name: str) -> asyncio.Lock:
        return self._locks.setdefault(name, asyncio.Lock())


def _age(ctx: AppContext, entry: _Entry) -> float:
    return (ctx.now() - entry.at).total_seconds()
