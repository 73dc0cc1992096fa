"""An adapter's `sign` hook: the request it signs is the one sent (final headers, exact
body, the query), the headers it adds reach the provider, and their values never reach
history; a hook that raises sends nothing."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from pathlib import Path

import httpx2

from app.providers.calls.client import ProviderClient
from app.providers.calls.types import Outcome
from app.providers.language.loader import load_profile
from tests.support.scripted_provider import profile_yaml

SECRET = "sk-sign-0123456789abcdef"
NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)

SIGNING = """
import hashlib
import hmac

from app.providers.language.adapter import Adapter


class Signs(Adapter):
    def sign(self, request):
        stamp = request.now.strftime("%Y%m%dT%H%M%SZ")
        text = "\\n".join([request.method, request.url, stamp, request.body.decode()])
        mac = hmac.new(request.secret.encode(), text.encode(), hashlib.sha256).hexdigest()
        assert request.headers["authorization"] == "Bearer " + request.secret
        return {"X-Date": stamp, "X-Signature": mac}


ADAPTER = Signs()
"""

BROKEN = """
from app.providers.language.adapter import Adapter


class Breaks(Adapter):
    def sign(self, request):
        raise RuntimeError("no key id")


ADAPTER = Breaks()
"""

CREDENTIALS = "credentials: {type: bearer, env: SCRIPTED_KEY}\n"


def _profile(tmp_path: Path, source: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "scripted.yaml"
    path.write_text(profile_yaml("scripted", itemless=True) + CREDENTIALS + "adapter: signs\n")
    (tmp_path / "signs.py").write_text(source)
    return load_profile(path, {"SCRIPTED_KEY": SECRET})


def _expected(request: httpx2.Request) -> str:
    stamp = request.headers["x-date"]
    text = "\n".join([request.method, str(request.url), stamp, request.content.decode()])
    return hmac.new(SECRET.encode(), text.encode(), hashlib.sha256).hexdigest()


async def _create(tmp_path: Path, source: str, seen: list[httpx2.Request]):  # type: ignore[no-untyped-def]
    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(202, json={"id": "job-1", "state": "running"})

    env = {"SCRIPTED_KEY": SECRET, "JOBGATE_SCRIPTED_URL": "http://127.0.0.1:9"}
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as http:
        client = ProviderClient(http, env, now=lambda: NOW)
        return await client.create(
            _profile(tmp_path, source), "run", {"a": 1}, token="jg_t", client_reference=None,
            trace_id="tr_0",
        )  # fmt: skip


async def test_the_signature_covers_the_request_as_sent_and_stays_out_of_history(
    tmp_path: Path,
) -> None:
    seen: list[httpx2.Request] = []
    res = await _create(tmp_path, SIGNING, seen)
    assert res.outcome == Outcome.OK, res
    [sent] = seen
    assert sent.headers["x-date"] == "20261206T120000Z"
    assert sent.headers["x-signature"] == _expected(sent)
    recorded = json.dumps(res.exchange.to_dict())
    assert sent.headers["x-signature"] not in recorded
    assert SECRET not in recorded


async def test_a_sign_hook_that_raises_sends_nothing(tmp_path: Path) -> None:
    seen: list[httpx2.Request] = []
    res = await _create(tmp_path, BROKEN, seen)
    assert seen == []
    assert res.outcome != Outcome.OK
    assert "the adapter's sign failed: RuntimeError" in json.dumps(res.exchange.to_dict())
