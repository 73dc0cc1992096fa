"""openapi/openapi.json is a checked build artifact: it must match the app."""

from __future__ import annotations

import json
from pathlib import Path

from app.openapi_dump import document

OPENAPI_FILE = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


def test_checked_in_openapi_matches_the_app() -> None:
    current = json.loads(json.dumps(document(), sort_keys=True))
    assert json.loads(OPENAPI_FILE.read_text()) == current, "run `make openapi`, commit it"


def test_operation_ids_are_stable() -> None:
    ids = {
        op["operationId"]
        for path in document()["paths"].values()  # type: ignore[attr-defined]
        for op in path.values()
    }
    assert {
        "createOperation",
        "getOperation",
        "listOperations",
        "waitOperation",
        "getOperationResult",
        "getOperationErrors",
        "getOperationHistory",
    } <= ids


def test_every_answer_of_the_webhook_route_is_documented() -> None:
    """The 503 (no secret configured) and 422 (a value outside the intake rules) included."""
    responses = document()["paths"]["/v1/webhooks/{provider}"]["post"]["responses"]  # type: ignore[index]
    assert {"200", "202", "400", "401", "404", "413", "422", "503"} <= set(responses)
    for code in ("422", "503"):
        schema = responses[code]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorBody"}


def test_every_error_answer_has_the_error_schema_and_an_example() -> None:
    for path, ops in document()["paths"].items():  # type: ignore[attr-defined]
        for method, op in ops.items():
            for status, answer in op["responses"].items():
                if status[0] not in "45":
                    continue
                where = f"{method.upper()} {path} {status}"
                content = answer["content"]["application/json"]
                assert content["schema"]["$ref"].startswith("#/components/schemas/Error"), where
                examples = content["examples"]
                assert examples, where
                for name, example in examples.items():
                    assert example["value"]["error"]["code"] == name, where


def test_create_requires_the_idempotency_key_and_events_are_a_stream() -> None:
    paths = document()["paths"]  # type: ignore[index]
    params = paths["/v1/operations"]["post"]["parameters"]  # type: ignore[index]
    key = next(p for p in params if p["name"] == "Idempotency-Key")
    assert key["in"] == "header" and key["required"] is True
    events = paths["/v1/operations/{op_id}/events"]["get"]["responses"]["200"]  # type: ignore[index]
    assert "text/event-stream" in events["content"]


def test_errors_about_an_operation_document_its_body() -> None:
    paths = document()["paths"]  # type: ignore[index]
    for path, method in (
        ("/v1/operations/{op_id}/cancel", "post"),
        ("/v1/operations/{op_id}/result", "get"),
        ("/v1/operations/{op_id}/resolve", "post"),
    ):
        conflict = paths[path][method]["responses"]["409"]["content"]["application/json"]  # type: ignore[index]
        assert conflict["schema"] == {"$ref": "#/components/schemas/ErrorWithOperation"}
        for example in conflict["examples"].values():
            operation = example["value"]["operation"]
            assert operation.get("outcome") == ("succeeded" if operation["done"] else None)


def test_no_schema_lets_other_keys_past_a_key_pattern() -> None:
    """A pattern on a dict's key type is documented as `patternProperties`, which lets
    any key that does not match through the schema while the server refuses it (the
    fuzzer's "schema-valid request rejected"): keys are typed by an alias instead
    (`Text`, `LabelKey`), documented as `propertyNames`."""
    found: list[str] = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            if "patternProperties" in node:
                found.append(where)
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}/{i}")

    walk(document(), "")
    assert found == [], found
