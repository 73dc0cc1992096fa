"""The bundled `replicate_predictions` profile against the Replicate predictions fake."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI, Request, Response

from app.providers.calls.client import ProviderClient
from app.providers.calls.types import Outcome
from app.providers.expressions import pointers
from app.providers.language.loader import load_profiles
from app.providers.language.words import RemoteClass, SingleCreate
from app.webhooks.verify import verify
from jobgate_fakes.providers.replicate_predictions.model import VERSION
from tests.providers.conftest import WEBHOOK_SECRET, Fake, fake_env
from tests.support.servers import serve_app

NAME = "replicate_predictions"


def prediction(prompt: str = "one two three", **more: Any) -> dict[str, Any]:
    return {"version": VERSION, "input": {"prompt": prompt, **more}}


async def test_a_quick_prediction_finishes_within_prefer_wait(fake: Fake) -> None:
    assert fake.profile.single_create is SingleCreate.NONE
    found = await fake.create("prediction", prediction())
    assert found.exchange.request_headers["Prefer"] == "wait=5"
    assert (found.outcome, found.remote_state, found.remote_class) == (
        Outcome.OK,
        "succeeded",
        RemoteClass.SUCCEEDED,
    )
    assert found.result == ["one", "two", "three"]  # the create carries the result
    sent = json.loads(found.exchange.request_body or "{}")
    assert "webhook" not in sent  # no webhook URL configured: polling only


async def test_a_slow_prediction_is_followed_at_urls_get(fake: Fake) -> None:
    slow = {"model": "jobgate/echo", "input": {"prompt": "a b", "run_seconds": 9}}
    found = await fake.create("model_prediction", slow)
    assert found.exchange.url.endswith("/v1/models/jobgate/echo/predictions")
    assert (found.remote_state, found.remote_class) == ("processing", RemoteClass.RUNNING)
    assert found.status_url == f"{fake.url}/v1/predictions/{found.remote_job_id}"
    assert found.cancel_url == f"{found.status_url}/cancel"
    done = await fake.until_done(found.remote_job_id or "", status_url=found.status_url)
    assert (done.remote_state, done.remote_class, done.result) == (
        "succeeded",
        RemoteClass.SUCCEEDED,
        ["a", "b"],
    )
    got = await fake.client.result(fake.profile, found.remote_job_id or "", trace_id="t")
    assert (got.outcome, got.result) == (Outcome.OK, ["a", "b"])


async def test_a_failed_prediction_carries_its_error(fake: Fake) -> None:
    found = await fake.create("prediction", prediction(run_seconds=8, fail=True))
    done = await fake.until_done(found.remote_job_id or "")
    assert (done.remote_state, done.remote_class) == ("failed", RemoteClass.FAILED)
    assert done.error == {"message": "fake model failure: the input asked to fail"}


async def test_cancel_at_urls_cancel(fake: Fake) -> None:
    found = await fake.create("prediction", prediction(run_seconds=30))
    sent = await fake.client.cancel(
        fake.profile, found.remote_job_id or "", trace_id="t", cancel_url=found.cancel_url
    )
    assert sent.exchange.url == found.cancel_url
    assert (sent.outcome, sent.remote_state, sent.remote_class) == (
        Outcome.OK,
        "canceled",
        RemoteClass.CANCELLED,
    )
    again = await fake.client.cancel(fake.profile, found.remote_job_id or "", trace_id="t")
    assert again.outcome is Outcome.OK  # a finished prediction is answered unchanged


async def test_unknown_version_is_rejected(fake: Fake) -> None:
    found = await fake.create("prediction", {"version": "nope", "input": {"prompt": "x"}})
    assert (found.outcome, found.exchange.status_code) == (Outcome.REJECTED, 422)


async def test_rate_limited_create_carries_retry_after(fake: Fake) -> None:
    await fake.fault(op="create", kind="rate_limit", retry_after=4)
    found = await fake.create("prediction", prediction())
    assert (found.outcome, found.retry_after_seconds) == (Outcome.RATE_LIMITED, 4.0)


async def test_a_status_url_elsewhere_gets_no_credential(fake: Fake) -> None:
    found = await fake.status("abc", status_url="https://evil.example/v1/predictions/abc")
    assert found.outcome is Outcome.REJECTED and found.exchange.status_code is None


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    app = FastAPI()
    got: list[dict[str, Any]] = []

    @app.post("/v1/webhooks/replicate_predictions")
    async def hook(request: Request) -> Response:
        got.append(
            {
                "query": dict(request.query_params),
                "headers": dict(request.headers),
                "body": await request.body(),
            }
        )
        return Response(status_code=204)

    with serve_app(app) as url:
        yield f"{url}/v1/webhooks/replicate_predictions", got


async def test_webhooks_carry_the_reference_and_verify_with_the_fetched_secret(
    fake: Fake, receiver: tuple[str, list[dict[str, Any]]]
) -> None:
    hook_url, got = receiver
    env = fake_env(NAME, fake.url, JOBGATE_REPLICATE_WEBHOOK_URL=hook_url)
    profile = load_profiles(None, env)[NAME]
    async with httpx2.AsyncClient() as http:
        client = ProviderClient(http, env)
        found = await client.create(
            profile, "prediction", prediction("hi there", run_seconds=8), token="t",
            client_reference="op_01HOOK", trace_id="t",
        )  # fmt: skip
        sent = json.loads(found.exchange.request_body or "{}")
        assert sent["webhook"] == f"{hook_url}?jobgate_ref=op_01HOOK"
        stats = await fake.stats()
        assert stats["jobs_by_reference"][sent["webhook"]] == [found.remote_job_id]
        fetched, secret = await client.webhook_secret(profile, trace_id="t")
        assert fetched is not None and fetched.outcome is Outcome.OK and secret is not None
        assert WEBHOOK_SECRET not in json.dumps(fetched.exchange.to_dict())
        await fake.advance(found.remote_job_id or "", 20)
        assert (await fake.control.post("/_fake/webhooks/flush")).status_code == 200
    assert got and all(g["query"] == {"jobgate_ref": "op_01HOOK"} for g in got)
    spec = profile.webhooks
    for delivery in got:
        verify(spec, secret.reveal(), delivery["headers"], delivery["body"], datetime.now(UTC))
        doc = json.loads(delivery["body"])
        assert pointers.get(doc, spec.job_id) == found.remote_job_id
    assert json.loads(got[-1]["body"])["status"] == "succeeded"
