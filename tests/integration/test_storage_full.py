"""A full disk is a clear answer (docs/operations.md, "When storage or the database fails").

On a tmpfs of the test's own, filled to the last byte: a create whose row does not fit
answers `507 storage_full` with Retry-After and keeps the connection; `/v1/readyz` says the
disk is below its reserve; a collected result with no room is not written (no file, no
temp file left) and is fetched again later; freeing the space recovers without a hand.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import Gateway
from tests.support.processes import gateway_env, gateway_process
from tests.support.small_disk import fill, free, small_disk

RESERVE = 512 * 1024


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk", size_mib=8) as where:
        yield where


@pytest.fixture
def gateway_settings(disk: Path) -> dict[str, Any]:
    """Results go to the small disk (the database stays on the test's own)."""
    return {"data_dir": disk, "inline_result_max_bytes": 0, "storage_reserve_bytes": RESERVE}


def leftovers(disk: Path) -> list[str]:
    return [name for _, _, files in os.walk(disk / "results") for name in files]


async def test_a_result_with_no_room_is_not_written_and_is_fetched_again(
    gateway: Gateway, disk: Path
) -> None:
    r = await gateway.start({"name": "fast", "result_bytes": 100_000})
    op_id = r.json()["operation_id"]
    filler = fill(disk)
    ready = await gateway.http.get("/v1/readyz")
    assert ready.status_code == 503 and "below its reserve" in ready.json()["reason"]
    for _ in range(3):
        await gateway.tick(61)
    body = (await gateway.http.get(f"/v1/operations/{op_id}")).json()
    assert (body["done"], body["state"]) == (False, "result_collecting"), body
    assert leftovers(disk) == []  # no result file and no temp file
    rows = (await gateway.http.get(f"/v1/operations/{op_id}/history")).json()["items"]
    said = [r for r in rows if r["kind"] == "storage_full"]
    assert len(said) == 3 and "will fetch it again" in said[-1]["cause"], said
    assert not [r for r in rows if r["kind"] == "step_failed"]  # the disk, not a bug
    free(filler)
    assert (await gateway.http.get("/v1/readyz")).status_code == 200
    done = await gateway.run_until_done(op_id, step=61)
    assert done["outcome"] == "succeeded", done
    assert [name for name in leftovers(disk) if name.startswith(".tmp-")] == []


def test_a_create_on_a_full_disk_is_507_and_recovers(
    mock_url: str, disk: Path, tmp_path: Path
) -> None:
    env = gateway_env("", mock_url, disk, storage_reserve_bytes=RESERVE)
    big = {"scenario": {"name": "fast"}, "notes": "n" * 200_000}
    body = {"provider": "mock", "kind": "report", "input": big}
    with (
        gateway_process(env, tmp_path / "gw.log") as (_, url),
        httpx2.Client(base_url=url, timeout=30) as http,
    ):
        assert (
            http.post("/v1/operations", json=body, headers={"Idempotency-Key": "a"}).status_code
            == 202
        )
        filler = fill(disk)
        refused = http.post("/v1/operations", json=body, headers={"Idempotency-Key": "b"})
        assert refused.status_code == 507, refused.text
        error = refused.json()["error"]
        assert error["code"] == "storage_full" and "NOT started" in error["message"]
        assert refused.headers["Retry-After"] == "30"
        assert refused.headers.get("connection", "").lower() != "close"
        assert http.get("/v1/healthz").status_code == 200
        ready = http.get("/v1/readyz")
        assert ready.status_code == 503 and "below its reserve" in ready.json()["reason"]
        free(filler)
        again = http.post("/v1/operations", json=body, headers={"Idempotency-Key": "b"})
        assert again.status_code == 202, again.text
        assert http.get("/v1/readyz").status_code == 200
