"""The bundled profiles driven through `ProviderClient` against the real provider fakes.

Each fake runs on a real uvicorn server (dropped connections need one) for the whole
module; every test starts it from a clean slate (`POST /_fake/reset`). The client gets
an explicit environment: the fake's URL in the profile's base-URL variable and the
fake's key as the credential, nothing from the machine.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest

from app.providers.calls.client import ProviderClient
from app.providers.calls.types import CallResult
from app.providers.language.loader import load_profiles
from app.providers.language.profile import Profile
from app.providers.language.words import RemoteClass
from jobgate_fakes.providers import create_app
from jobgate_fakes.providers.settings import FakeSettings
from tests.support.servers import serve_app

KEY = "fake-key-0123456789"
WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

# profile name -> (base URL variable, credential variable)
ENV_NAMES = {
    "openai_batch": ("JOBGATE_OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "anthropic_message_batches": ("JOBGATE_ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
    "replicate_predictions": ("JOBGATE_REPLICATE_BASE_URL", "REPLICATE_API_TOKEN"),
    "google_translate": ("JOBGATE_GOOGLE_TRANSLATE_BASE_URL", "GOOGLE_OAUTH_ACCESS_TOKEN"),
    "azure_operation_location": ("JOBGATE_AZURE_LANGUAGE_ENDPOINT", "AZURE_LANGUAGE_KEY"),
}


@dataclass
class Fake:
    """One running fake and a profile pointed at it."""

    name: str
    url: str
    env: dict[str, str]
    profile: Profile
    client: ProviderClient
    control: httpx2.AsyncClient

    async def fault(self, **spec: Any) -> None:
        r = await self.control.post("/_fake/faults", json=spec)
        assert r.status_code == 200, r.text

    async def stats(self, reference: str | None = None) -> dict[str, Any]:
        params = {"reference": reference} if reference is not None else {}
        return dict((await self.control.get("/_fake/stats", params=params)).json())

    async def advance(self, job_id: str, steps: int) -> None:
        r = await self.control.post("/_fake/advance", json={"job_id": job_id, "steps": steps})
        assert r.status_code == 200, r.text

    async def create(self, kind: str, input: Any, ref: str = "op_01TEST") -> CallResult:
        return await self.client.create(
            self.profile, kind, input, token="unused", client_reference=ref, trace_id="tr_1"
        )

    async def status(self, job_id: str, **kw: Any) -> CallResult:
        return await self.client.status(self.profile, job_id, trace_id="tr_1", **kw)

    async def until_done(self, job_id: str, limit: int = 60, **kw: Any) -> CallResult:
        """Status reads until the class is neither pending nor running."""
        for _ in range(limit):
            found = await self.status(job_id, **kw)
            if found.remote_class not in (None, RemoteClass.PENDING, RemoteClass.RUNNING):
                return found
        raise AssertionError(f"{job_id} still running after {limit} reads")


def fake_env(name: str, url: str, **extra: str) -> dict[str, str]:
    base, credential = ENV_NAMES[name]
    return {base: url, credential: KEY, **extra}


@pytest.fixture(scope="module")
def served(request: pytest.FixtureRequest) -> Iterator[str]:
    """The module's fake (its NAME), served for the whole module."""
    name = request.module.NAME
    settings = FakeSettings(api_key=KEY, webhook_secret=WEBHOOK_SECRET, page_size=3)
    with serve_app(create_app(name, settings)) as url:
        yield url


@pytest.fixture
async def fake(request: pytest.FixtureRequest, served: str) -> AsyncIterator[Fake]:
    name = request.module.NAME
    extra = getattr(request.module, "EXTRA_ENV", {})
    env = fake_env(name, served, **extra)
    async with (
        httpx2.AsyncClient(timeout=10) as http,
        httpx2.AsyncClient(base_url=served, timeout=10) as control,
    ):
        assert (await control.post("/_fake/reset")).status_code == 200
        profile = load_profiles(None, env)[name]
        yield Fake(name, served, env, profile, ProviderClient(http, env), control)
