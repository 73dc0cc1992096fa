"""Gateway-side options sit beside `input` in the create request: the provider never
receives one, and one misplaced inside `input` is refused with nothing written.

The mock profile sends `input` whole, so it is where a misplaced option would leak: the
mock records each create body as it received it (`GET /_mock/create_body`).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from app.operations.contract.schemas import GATEWAY_OPTIONS
from tests.conftest import Gateway


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    """A loopback callback URL is accepted (no DNS needed); nothing is delivered here."""
    return {"allow_private_callbacks": True}


SCHEMA_OK = {"type": "object", "required": ["rows"]}
SCHEMA_BAD = {"type": "object", "required": ["no_such_member"]}


async def create(gateway: Gateway, body: dict[str, Any], key: str | None = None) -> Any:
    return await gateway.http.post(
        "/v1/operations",
        json={"provider": "mock", "kind": "report", **body},
        headers={"Idempotency-Key": key or uuid.uuid4().hex},
    )


def sent_body(gateway: Gateway, job_id: str) -> dict[str, Any]:
    found = gateway.mock.get("/_mock/create_body", params={"job_id": job_id}).json()
    assert found["create_body"] is not None, found
    return dict(found["create_body"])


async def test_the_provider_never_receives_a_gateway_option(gateway: Gateway) -> None:
    given = {"scenario": {"name": "fast"}, "note": "for the provider"}
    r = await create(
        gateway,
        {
            "input": given,
            "deadlines": {"result_seconds": 3600},
            "labels": {"team": "alpha"},
            "approval": {"by": "lead"},
            "validation": {"json_schema": SCHEMA_OK, "require_counts": True},
        },
    )
    assert r.status_code == 202, r.text
    done = await gateway.run_until_done(r.json()["operation_id"])
    assert (done["state"], done["outcome"]) == ("succeeded", "succeeded"), done
    assert done["labels"] == {"team": "alpha"}
    body = sent_body(gateway, done["remote_job_id"])
    assert body["input"] == given  # exactly the provider's input, nothing added
    assert not set(GATEWAY_OPTIONS) & set(body), body
    assert not set(GATEWAY_OPTIONS) & set(body["input"]), body


async def test_validation_beside_input_is_what_checks_the_result(gateway: Gateway) -> None:
    r = await create(
        gateway,
        {"input": {"scenario": {"name": "fast"}}, "validation": {"json_schema": SCHEMA_BAD}},
    )
    assert r.status_code == 202, r.text
    done = await gateway.run_until_done(r.json()["operation_id"])
    assert (done["state"], done["outcome"]) == ("result_validation_failed", "needs_attention")
    assert done["error"]["details"] == {"check": "schema_mismatch"}
    assert "validation" not in sent_body(gateway, done["remote_job_id"])["input"]


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("validation", {"json_schema": SCHEMA_OK}),
        ("labels", {"team": "alpha"}),
        ("deadlines", {"result_seconds": 60}),
        ("callback_url", "http://127.0.0.1:9/hook"),
        ("approval", {"by": "lead"}),
    ],
)
async def test_an_option_inside_input_is_refused_and_nothing_is_written(
    gateway: Gateway, option: str, value: Any
) -> None:
    key = uuid.uuid4().hex
    r = await create(gateway, {"input": {"scenario": {"name": "fast"}, option: value}}, key)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "gateway_option_in_input"
    assert error["details"]["field"] == f"input.{option}"
    assert error["details"]["belongs"] == option
    assert f"top-level field `{option}`" in error["message"]
    assert (await gateway.http.get("/v1/operations")).json()["items"] == []
    # Nothing was recorded under the key: the corrected request is a first call.
    fixed = await create(gateway, {"input": {"scenario": {"name": "fast"}}, option: value}, key)
    assert fixed.status_code == 202, fixed.text
    assert fixed.headers.get("Idempotent-Replayed") is None
