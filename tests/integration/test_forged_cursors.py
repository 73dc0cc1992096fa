"""Forged cursors and resume tokens are `400 invalid_cursor`: no 500, no half-opened stream."""

from __future__ import annotations

import base64
import json

import pytest

from tests.conftest import Gateway


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


FORGED_LIST_CURSORS = [
    _b64(json.dumps(["2026-01-01T00:00:00", "op_x"]).encode()),  # naive date
    _b64(json.dumps(["0001-01-01T00:00:00+05:00", "op_x"]).encode()),  # no UTC time
    _b64(json.dumps(["2026-01-01T00:00:00+00:00", "op_\x00"]).encode()),  # NUL id
    _b64(json.dumps(["2026-01-01T00:00:00+00:00", 5]).encode()),
    _b64(json.dumps(["2026-01-01T00:00:00+00:00"]).encode()),
    _b64(b"[" * 1500 + b"]" * 1500),  # nested 1,500 deep
    _b64(b"5"),
    _b64(b"\xff\xfe"),
    "--5",
    "\u00b2",
    "9" * 30,
    "!!",
]


@pytest.mark.parametrize("cursor", FORGED_LIST_CURSORS)
async def test_forged_list_cursors(gateway: Gateway, cursor: str) -> None:
    for path in ("/v1/operations", "/operations"):
        r = await gateway.http.get(path, params={"cursor": cursor})
        assert r.status_code == 400, (path, r.text)
        assert "invalid_cursor" in r.text


async def test_a_real_cursor_still_pages(gateway: Gateway) -> None:
    ids = [(await gateway.start({"name": "sync"})).json()["operation_id"] for _ in range(3)]
    first = (await gateway.http.get("/v1/operations", params={"limit": 2})).json()
    second = (
        await gateway.http.get(
            "/v1/operations", params={"limit": 2, "cursor": first["next_cursor"]}
        )
    ).json()
    seen = [o["operation_id"] for o in first["items"] + second["items"]]
    assert seen == list(reversed(ids)) and second["next_cursor"] is None


@pytest.mark.parametrize("cursor", ["--5", "-1", "\u00b2", "9" * 30, "2147483648", "01", " 1", ""])
async def test_forged_errors_cursors(gateway: Gateway, cursor: str) -> None:
    op_id = (await gateway.start({"name": "partial_results", "processed": 5, "failed": 3})).json()[
        "operation_id"
    ]
    await gateway.run_until_done(op_id)
    r = await gateway.http.get(f"/v1/operations/{op_id}/errors", params={"cursor": cursor})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid_cursor"
    ok = await gateway.http.get(f"/v1/operations/{op_id}/errors", params={"cursor": "0"})
    assert ok.status_code == 200 and [i["position"] for i in ok.json()["items"]] == [1, 2]


@pytest.mark.parametrize(
    "last_event_id",
    ["\u00b2", "abc", "-1", "1.5", "5" * 5000, "9" * 24, "9" * 30, "9223372036854775808"],
)
async def test_forged_last_event_ids_open_no_stream(gateway: Gateway, last_event_id: str) -> None:
    op_id = (await gateway.start({"name": "sync"})).json()["operation_id"]
    r = await gateway.http.get(
        f"/v1/operations/{op_id}/events",
        headers={"Last-Event-ID": last_event_id.encode("utf-8")},  # raw bytes on the wire
    )
    assert r.status_code == 400, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert r.json()["error"]["code"] == "invalid_cursor"


async def test_the_largest_event_id_resumes_an_empty_stream(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "sync"})).json()["operation_id"]
    r = await gateway.http.get(
        f"/v1/operations/{op_id}/events", headers={"Last-Event-ID": "9223372036854775807"}
    )
    assert r.status_code == 200
    events = [line for line in r.text.splitlines() if line.startswith("event:")]
    assert events == ["event: done"]  # nothing after that id, then the final body
