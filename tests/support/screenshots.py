"""`make screenshots`: the operator pages in headless Chromium, as a person sees them.

Starts the mock provider and a gateway (dev mode, a policy that holds one create for
approval) on free loopback ports with a fresh SQLite database, makes an operation of
each kind worth a look, and saves at a laptop's 1366 px width:

- `operations-list.png`: the list, with what needs a person pinned above it;
- `held-create.png`: a create held for approval (only the approval form);
- `attention-case.png`: a result that failed its checks (the resolve form);
- `dashboard.png`: `/dashboard`.

Headless Chromium is used only when it is installed (`chromium` or `chromium-browser` on
PATH); without it the command says so, starts nothing and exits 0. Usage:
`python -m tests.support.screenshots [OUT_DIR]` (default docs/screenshots).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

from app.core.db.migrate import upgrade
from tests.support.processes import START_TIMEOUT_S, gateway_env, gateway_process, mock_process
from tests.support.timing import PROCESS_WORK_S, budget

POLICY = """\
version: 1
rules:
  - name: gated
    provider: mock
    labels: {lane: gated}
    approval: always
"""
WIDTH = 1366
SHOTS = {  # file -> (path under the gateway, height)
    "operations-list.png": ("/operations", 900),
    "held-create.png": ("/operations/{held}", 1300),
    "attention-case.png": ("/operations/{waiting}", 1500),
    "dashboard.png": ("/dashboard", 1200),
}


def browser() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def shoot(chromium: str, url: str, out: Path, height: int) -> None:
    done = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={WIDTH},{height}", f"--screenshot={out}", url],
        capture_output=True, timeout=START_TIMEOUT_S * 3,
    )  # fmt: skip
    if done.returncode != 0 or not out.exists():
        raise SystemExit(f"screenshots: chromium failed on {url}: {done.stderr[-500:]!r}")


def create(url: str, name: str, key: str, **extra: object) -> str:
    body = {"provider": "mock", "kind": "report", "input": {"scenario": {"name": name}}, **extra}
    r = httpx2.post(f"{url}/v1/operations", json=body, headers={"Idempotency-Key": key})
    r.raise_for_status()
    return str(r.json()["operation_id"])


def take(out_dir: Path) -> list[Path]:
    chromium = browser()
    assert chromium is not None
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="jobgate-shots-") as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "policy.yaml").write_text(POLICY)
        database = f"sqlite:///{tmp / 'shots.db'}"
        upgrade(database)
        with mock_process(tmp) as mock_url:
            env = gateway_env(database, mock_url, tmp / "data", policy_file=tmp / "policy.yaml")
            with gateway_process(env, tmp / "gateway.log") as (_, url):
                for i, name in enumerate(["fast"] * 8 + ["reject", "never_finishes"]):
                    create(url, name, f"shot-{i}")
                waiting = create(url, "corrupt_result", "shot-corrupt")
                held = create(url, "fast", "shot-held", labels={"lane": "gated"})
                ends = time.monotonic() + budget(PROCESS_WORK_S)
                while not httpx2.get(f"{url}/v1/operations/{waiting}").json()["done"]:
                    if time.monotonic() > ends:
                        raise SystemExit("screenshots: the attention case never settled")
                    time.sleep(0.1)
                taken = []
                for file, (path, height) in SHOTS.items():
                    target = out_dir / file
                    shoot(chromium, url + path.format(held=held, waiting=waiting), target, height)
                    taken.append(target)
    return taken


def main(argv: list[str]) -> int:
    out_dir = Path(argv[0]) if argv else Path("docs/screenshots")
    if browser() is None:
        print(  # noqa: T201
            "screenshots: headless Chromium is not installed (no `chromium` or "
            "`chromium-browser` on PATH): no screenshots taken. Install it with your "
            "system's package manager (Debian: apt-get install chromium) and run again."
        )
        return 0
    for path in take(out_dir):
        print(f"screenshots: {path}")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
