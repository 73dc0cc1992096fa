"""The operator view in a real browser: headless Chromium screenshots of the list and of
a page that needs a decision, at a laptop's 1366x768. Skipped where Chromium is not
installed (CI machines); the same layout facts are checked in HTML by
tests/integration/test_views_attention.py, which always runs.

Set SCREENSHOTS_DIR to keep the images for a person to look at.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from tests.support import png
from tests.support.processes import (
    START_TIMEOUT_S,
    gateway_env,
    gateway_process,
    mock_process,
)
from tests.support.timing import PROCESS_WORK_S, budget

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
KEEP = os.environ.get("SCREENSHOTS_DIR")  # not JOBGATE_*: conftest strips those
BADGE_RED = (0xB3, 0x26, 0x1E)  # --bad in app/views/static/style.css: the nav count

pytestmark = pytest.mark.skipif(BROWSER is None, reason="headless Chromium is not installed")


def shoot(url: str, out: Path, height: int) -> bytes:
    assert BROWSER is not None
    done = subprocess.run(
        [
            BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--window-size=1366,{height}", f"--screenshot={out}", url,
        ],
        capture_output=True,
        timeout=START_TIMEOUT_S * 3,
    )  # fmt: skip
    assert done.returncode == 0 and out.exists(), done.stderr[-2000:]
    data = out.read_bytes()
    if KEEP:
        Path(KEEP).mkdir(parents=True, exist_ok=True)
        shutil.copy(out, Path(KEEP) / out.name)
    return data


def near(pixel: tuple[int, int, int], color: tuple[int, int, int]) -> bool:
    return all(abs(p - c) <= 12 for p, c in zip(pixel, color, strict=True))


def test_the_list_and_a_decision_page_in_a_browser(tmp_path: Path, database_url: str) -> None:
    with mock_process(tmp_path) as mock_url:
        env = gateway_env(database_url, mock_url, tmp_path)
        with gateway_process(env, tmp_path / "gateway.log") as (_, url):
            for i, name in enumerate(["corrupt_result"] + ["fast"] * 15):
                body = {"provider": "mock", "kind": "report", "input": {"scenario": {"name": name}}}
                r = httpx2.post(
                    f"{url}/v1/operations", json=body, headers={"Idempotency-Key": f"shot-{i}"}
                )
                assert r.status_code == 202, r.text
            ends = time.monotonic() + budget(PROCESS_WORK_S)
            while not (items := httpx2.get(f"{url}/v1/attention").json()["items"]):
                assert time.monotonic() < ends, "nothing reached the attention list"
                time.sleep(0.1)
            waiting = items[0]["operation"]["operation_id"]
            listing = shoot(f"{url}/operations", tmp_path / "operations-list.png", 768)
            detail = shoot(f"{url}/operations/{waiting}", tmp_path / "operation-detail.png", 1400)

    assert png.size(listing) == (1366, 768)
    # The red count of what needs a person is in the navigation bar (the top 40 px).
    top = png.top_rows(listing, 40)
    red = sum(near(p, BADGE_RED) for row in top for p in row)
    assert red > 50, f"{red} badge-red pixels in the navigation bar"
    # The decision page renders with the same bar and its count.
    assert png.size(detail)[0] == 1366
    top = png.top_rows(detail, 40)
    assert sum(near(p, BADGE_RED) for row in top for p in row) > 50
