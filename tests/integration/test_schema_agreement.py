"""What the OpenAPI document calls valid is taken, and what it forbids is refused.

Each case is a place where they disagreed: empty query values (OpenAPI's default is
`allowEmptyValue: false`), an integer past I-JSON in `validation.max_bytes`, the list
cursor's form, `accept_job` without a job id, and an Idempotency-Key outside ASCII.
"""

from __future__ import annotations

import uuid
from typing import Any

import jsonschema
import pytest

from tests.conftest import Gateway


async def spec(gateway: Gateway) -> dict[str, Any]:
    return dict((await gateway.http.get("/openapi.json")).json())


def query_param(doc: dict[str, Any], path: str, name: str) -> dict[str, Any]:
    params = doc["paths"][path]["get"]["parameters"]
    return dict(next(p for p in params if p["name"] == name)["schema"])


@pytest.mark.parametrize("name", ["status", "state", "provider", "trace_id", "label", "cursor"])
async def test_an_empty_list_filter_is_refused_as_the_schema_says(
    gateway: Gateway, name: str
) -> None:
    doc = await spec(gateway)
    schema = query_param(doc, "/v1/operations", name)
    assert any(s.get("minLength") == 1 for s in schema.get("anyOf", [schema]))
    r = await gateway.http.get("/v1/operations", params={name: ""})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "invalid_request"


async def test_the_list_cursor_has_a_form_and_a_forged_one_is_refused(gateway: Gateway) -> None:
    doc = await spec(gateway)
    form = {"type": "string", "pattern": query_param(doc, "/v1/operations", "cursor")["pattern"]}
    for forged in ("È\x17", "bm90LWEtY3Vyc29y"):
        r = await gateway.http.get("/v1/operations", params={"cursor": forged})
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_cursor", r.text
    jsonschema.validate("bm90LWEtY3Vyc29y", form)  # well-formed, still not one we issued
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate("È\x17", form)


async def test_max_bytes_past_i_json_is_outside_the_schema_and_refused(gateway: Gateway) -> None:
    doc = await spec(gateway)
    bound = doc["components"]["schemas"]["ValidationIn"]["properties"]["max_bytes"]
    assert any(s.get("maximum") == 2**53 - 1 for s in bound.get("anyOf", [bound]))
    r = await gateway.start({"name": "fast"}, validation={"max_bytes": 2**53})
    assert r.status_code == 422, r.text


async def test_accept_job_needs_a_job_id_in_the_schema_too(gateway: Gateway) -> None:
    doc = await spec(gateway)
    schema = doc["components"]["schemas"]["ResolveRequest"]
    for body in ({"decision": "accept_job", "reason": "x", "remote_job_id": None},
                 {"decision": "accept_job", "reason": "x"}):  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(body, schema)
    jsonschema.validate({"decision": "abandon", "reason": "x"}, schema)
    jsonschema.validate({"decision": "accept_job", "reason": "x", "remote_job_id": "j"}, schema)


@pytest.mark.parametrize("key", ["café".encode(), b"caf\xe9", "ключ".encode(), b" padded "])
async def test_an_idempotency_key_outside_printable_ascii_is_refused(
    gateway: Gateway, key: bytes
) -> None:
    r = await gateway.http.post(
        "/v1/operations",
        json={"provider": "mock", "kind": "report", "input": {}},
        headers={"Idempotency-Key": key},
    )
    if key.strip() == key:
        assert r.status_code == 400, r.text
        assert r.json()["error"]["code"] == "idempotency_key_invalid"
    listed = (await gateway.http.get("/v1/operations")).json()["items"]
    stored = {op.get("idempotency_key") for op in listed}
    assert not any(k and not k.isascii() for k in stored)


async def test_a_printable_ascii_key_is_taken(gateway: Gateway) -> None:
    r = await gateway.start({"name": "fast"}, key=f"task 42/{uuid.uuid4().hex}!")
    assert r.status_code == 202, r.text
