"""Label keys are 1-64 characters and values at most 256 (docs/agent-api.md, "The create
request"): a create outside them is 422 with nothing written and nothing sent."""

from __future__ import annotations

import pytest

from tests.conftest import Gateway


@pytest.mark.parametrize(
    "labels",
    [
        {"": "x"},  # an empty key
        {"k" * 65: "x"},
        {"team": "v" * 257},
        {"k" * 10_000: "v" * 10_000},
    ],
)
async def test_a_label_outside_the_bounds_is_422_and_nothing_is_written(
    gateway: Gateway, labels: dict[str, str]
) -> None:
    sent = _creates_sent(gateway)
    r = await gateway.start(labels=labels)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "invalid_request"
    assert "labels" in str(r.json()["error"]["details"])
    listed = (await gateway.http.get("/v1/operations")).json()["items"]
    assert listed == []
    assert _creates_sent(gateway) == sent


def _creates_sent(gateway: Gateway) -> int:
    return sum(gateway.mock.get("/_mock/stats").json()["creates_by_token"].values())


async def test_labels_at_the_bounds_are_kept_as_given(gateway: Gateway) -> None:
    labels = {"k" * 64: "v" * 256, "a": ""}
    r = await gateway.start(labels=labels)
    assert r.status_code == 202, r.text
    assert r.json()["labels"] == labels
