"""Shared fakes for the provider-client tests (fixtures are in tests/unit/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx2

from app.providers.calls.types import CallResult
from app.providers.language.profile import Profile

BASE = "http://mock.test"
SECRET = 's3cr3t/"tok+en'  # escapes differently in JSON and in URLs
ENV = {"JOBGATE_MOCK_PROVIDER_URL": BASE, "JOBGATE_MOCK_PROVIDER_TOKEN": SECRET}
NOW = datetime(2025, 1, 6, 12, 0, 0, tzinfo=UTC)
Handler = Callable[[httpx2.Request], httpx2.Response]


def variant(profile: Profile, **changes: Any) -> Profile:
    data = profile.model_dump(mode="json")
    data.update(changes)
    return Profile.model_validate(data)


class Recorder:
    """Collects requests and answers with a fixed handler."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.handler(request)


def answer(status: int, body: Any = None, **headers: str) -> Handler:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return lambda request: httpx2.Response(status, content=content, headers=headers)


def leaked(found: CallResult) -> bool:
    text = json.dumps(found.exchange.to_dict()) + repr(found.body) + repr(found.error)
    return any(v in text for v in (SECRET, json.dumps(SECRET)[1:-1], "s3cr3t"))
