"""Fetched webhook secrets (app.webhooks.secrets): fetched once, kept, asked again only
when a signature fails and the last fetch is old enough, and never shown."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest

from app.core.runtime.clock import FakeClock
from app.providers.calls.client import ProviderClient
from app.providers.language.loader import load_profiles
from app.providers.language.profile import Profile
from app.webhooks.secrets import REFETCH_MIN_SECONDS, WebhookSecrets

NAME = "replicate_predictions"
OLD = "whsec_" + base64.b64encode(b"old-secret-0000000000000000000001").decode()
NEW = "whsec_" + base64.b64encode(b"new-secret-0000000000000000000002").decode()
ENV = {"REPLICATE_API_TOKEN": "r8_token", "JOBGATE_REPLICATE_BASE_URL": "http://replicate.test"}


@dataclass
class Ctx:
    """What WebhookSecrets reads of the app context."""

    env: dict[str, str]
    client: ProviderClient
    clock: FakeClock

    def now(self) -> Any:
        return self.clock.now()


@dataclass
class Provider:
    """Serves `secret` at Replicate's secret endpoint and counts the calls."""

    secret: str = OLD
    calls: int = 0
    status: int = 200

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/webhooks/default/secret"
        assert request.headers["authorization"] == "Bearer r8_token"
        self.calls += 1
        if self.status != 200:
            return httpx2.Response(self.status, json={"detail": "nope"})
        return httpx2.Response(200, json={"key": self.secret})


@pytest.fixture
def provider() -> Provider:
    return Provider()


@pytest.fixture
async def ctx(provider: Provider) -> AsyncIterator[Ctx]:
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(provider.handle)) as http:
        yield Ctx(dict(ENV), ProviderClient(http, ENV), FakeClock())


def profile(env: dict[str, str] | None = None) -> Profile:
    return load_profiles(None, env or ENV)[NAME]


async def test_fetched_once_and_kept(ctx: Ctx, provider: Provider) -> None:
    secrets = WebhookSecrets()
    first = await secrets.get(ctx, profile(), trace_id="t")
    again = await secrets.get(ctx, profile(), trace_id="t")
    assert first.fetched and first.secret is not None and first.secret.reveal() == OLD
    assert again.secret is first.secret and provider.calls == 1
    assert OLD not in repr(first)


async def test_a_rotated_secret_is_fetched_again_at_most_once_a_minute(
    ctx: Ctx, provider: Provider
) -> None:
    secrets = WebhookSecrets()
    found = await secrets.get(ctx, profile(), trace_id="t")
    assert found.secret is not None
    provider.secret = NEW
    # Just fetched: a failing signature is not a reason to ask again yet (forgeries).
    assert await secrets.refetch(ctx, profile(), found.secret, trace_id="t") is None
    assert provider.calls == 1
    ctx.clock.advance(REFETCH_MIN_SECONDS)
    fresh = await secrets.refetch(ctx, profile(), found.secret, trace_id="t")
    assert fresh is not None and fresh.reveal() == NEW and provider.calls == 2
    # Another event that failed on the old secret gets the new one without a call.
    again = await secrets.refetch(ctx, profile(), found.secret, trace_id="t")
    assert again is fresh and provider.calls == 2
    kept = await secrets.get(ctx, profile(), trace_id="t")
    assert kept.secret is fresh
    ctx.clock.advance(REFETCH_MIN_SECONDS)
    # Unchanged at the provider: nothing to retry with.
    assert await secrets.refetch(ctx, profile(), fresh, trace_id="t") is None
    assert provider.calls == 3


async def test_a_configured_secret_wins_and_nothing_is_fetched(
    ctx: Ctx, provider: Provider
) -> None:
    env = ENV | {"REPLICATE_WEBHOOK_SECRET": NEW}
    ctx.env = env
    found = await WebhookSecrets().get(ctx, profile(env), trace_id="t")
    assert not found.fetched and found.secret is not None and found.secret.reveal() == NEW
    assert provider.calls == 0


async def test_a_failed_fetch_says_why_and_is_tried_again_a_minute_later(
    ctx: Ctx, provider: Provider
) -> None:
    provider.status = 503
    secrets = WebhookSecrets()
    found = await secrets.get(ctx, profile(), trace_id="t")
    assert found.secret is None and found.why is not None and "fetching it" in found.why
    provider.status = 200
    replicate = profile()
    for _ in range(30):  # anonymous events meanwhile: answered from memory, no call
        again = await secrets.get(ctx, replicate, trace_id="t")
        assert again.secret is None and again.why == found.why
    assert provider.calls == 1
    ctx.clock.advance(REFETCH_MIN_SECONDS)
    found = await secrets.get(ctx, profile(), trace_id="t")
    assert found.secret is not None and provider.calls == 2


async def test_a_failed_refetch_is_not_retried_by_the_next_forgery(
    ctx: Ctx, provider: Provider
) -> None:
    secrets, replicate = WebhookSecrets(), profile()
    found = await secrets.get(ctx, replicate, trace_id="t")
    assert found.secret is not None
    ctx.clock.advance(REFETCH_MIN_SECONDS)
    provider.status = 503
    for _ in range(30):  # forged signatures, each asking for a fresh secret
        assert await secrets.refetch(ctx, replicate, found.secret, trace_id="t") is None
    assert provider.calls == 2
