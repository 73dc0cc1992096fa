"""openapi/openapi.json is a checked build artifact: it must match the app."""

from __future__ import annotations

import json
from pathlib import Path

from app.openapi_dump import document

SPEC = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


def test_checked_in_openapi_matches_the_app() -> None:
    current = json.loads(json.dumps(document(), sort_keys=True))
    assert json.loads(SPEC.read_text()) == current, "run `make openapi` and commit the result"


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
