"""Fixtures for the provider-client tests: the mock profile and a recording client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest

from app.providers.calls.client import ProviderClient
from app.providers.language.loader import load_profiles
from app.providers.language.profile import Profile
from tests.unit.provider_fakes import ENV, NOW, Handler, Recorder


@pytest.fixture
def mock_profile() -> Profile:
    return load_profiles(None, ENV)["mock"]


@pytest.fixture
async def make_client() -> AsyncIterator[Callable[..., tuple[ProviderClient, Recorder]]]:
    clients: list[httpx2.AsyncClient] = []

    def factory(
        handler: Handler, env: dict[str, str] | None = None, **kw: Any
    ) -> tuple[ProviderClient, Recorder]:
        recorder = Recorder(handler)
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(recorder))
        clients.append(http)
        return ProviderClient(http, ENV if env is None else env, now=lambda: NOW, **kw), recorder

    yield factory
    for http in clients:
        await http.aclose()
