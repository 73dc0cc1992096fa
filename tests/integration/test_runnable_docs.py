"""The README's and the docs' copy-paste paths run verbatim against a live gateway.

A fenced `sh` or `python` block right after an HTML comment `<!-- runnable -->` (or
`<!-- runnable: expect TEXT -->`, which also requires TEXT in what it prints) is run as
written against what `make run` starts (`python -m app.devrun`: the gateway, its
observer and the mock provider, in dev mode), with only the gateway's address changed
to this run's free port. `<!-- runnable in keys mode ... -->` runs it against `make run
AUTH=keys` instead, with that run's data directory, so `jobgate keys` reaches its
database. Shell blocks run under `bash -euo pipefail` with the
environment's `jobgate` on PATH; Python blocks with this interpreter (jobgate_client,
httpx2, mcp installed). Every block must exit 0 without a traceback.

Idempotency keys in the examples are distinct (a key reused with another body is a
`422 idempotency_key_reused`): checked here over every block in README and docs.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.processes import START_TIMEOUT_S, free_port

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "jobgate_client" / "README.md",
]
MARK = re.compile(
    r"^<!-- runnable(?P<keys> in keys mode)?(?:: expect (?P<expect>.+?))? -->\n+"
    r"```(?P<lang>sh|python)\n(?P<code>.*?)^```$",
    re.M | re.S,
)
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```$", re.M | re.S)
KEYS = re.compile(
    r"""idempotency[_-]key["']?\s*[:=]\s*["']([^"']+)["']|Idempotency-Key: ([^'"\s]+)['"]""", re.I
)
DEFAULT = "http://127.0.0.1:8080"


@dataclass(frozen=True)
class Block:
    where: str
    lang: str
    code: str
    expect: str | None
    keys: bool = False  # run against `make run AUTH=keys`, on its database


def runnable() -> list[Block]:
    blocks = []
    for path in DOCS:
        text = path.read_text()
        for m in MARK.finditer(text):
            line = text[: m.start()].count("\n") + 1
            where = f"{path.relative_to(ROOT)}:{line}"
            blocks.append(Block(where, m["lang"], m["code"], m["expect"], bool(m["keys"])))
    return blocks


BLOCKS = runnable()


def test_the_docs_mark_their_copy_paste_paths_runnable() -> None:
    marked = {b.where.split(":")[0] for b in BLOCKS}
    assert {"README.md", "docs/python-client.md", "docs/mcp.md"} <= marked, marked
    assert all(DEFAULT in b.code for b in BLOCKS), "a runnable block names the gateway"


def test_idempotency_keys_in_examples_are_distinct() -> None:
    seen: dict[str, str] = {}
    for path in DOCS:
        text = path.read_text()
        for block in FENCE.finditer(text):
            where = f"{path.relative_to(ROOT)}:{text[: block.start()].count(chr(10)) + 1}"
            for m in KEYS.finditer(block.group(1)):
                key = m.group(1) or m.group(2)
                if key in {"TOKEN", "$KEY"} or "$" in key:
                    continue
                assert key not in seen, f"key {key!r} in {where} and {seen[key]}"
                seen[key] = where
    assert len(seen) >= 4, seen


@dataclass(frozen=True)
class Run:
    url: str
    data_dir: Path


@contextmanager
def started(tmp: Path, auth: str) -> Iterator[Run]:
    """`make run`'s processes on free ports, in a fresh directory, in `auth` mode."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
    env.update(
        PORT=str(port),
        MOCK_PORT=str(free_port()),
        JOBGATE_AUTH=auth,
        JOBGATE_DATA_DIR=str(tmp / "data"),
        JOBGATE_MOCK_STATE_PATH=str(tmp / "mock.db"),
        JOBGATE_TIME_SCALE="0.01",  # the mock's "slow" jobs take a few polls: quick ones
        JOBGATE_OBSERVER_INTERVAL_SECONDS="0.05",
    )
    migrated = subprocess.run(
        [sys.executable, "-m", "app.cli", "migrate"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=START_TIMEOUT_S * 3,
    )  # fmt: skip
    assert migrated.returncode == 0, migrated.stderr  # as `make run` does first
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.devrun"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=(tmp / "make-run.log").open("wb"),
        text=True,
    )
    try:
        timer = threading.Timer(START_TIMEOUT_S * 3, proc.kill)
        timer.start()
        assert proc.stdout is not None
        for line in proc.stdout:
            if "Ctrl-C stops everything." in line:
                break
        timer.cancel()
        # Keep draining stdout so the gateway never blocks on a full pipe.
        threading.Thread(target=proc.stdout.read, daemon=True).start()
        assert proc.poll() is None, (tmp / "make-run.log").read_text()[-3000:]
        yield Run(f"http://127.0.0.1:{port}", tmp / "data")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


@pytest.fixture(scope="module")
def make_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    with started(tmp_path_factory.mktemp("make-run"), "dev") as run:
        yield run


@pytest.fixture(scope="module")
def make_run_keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    with started(tmp_path_factory.mktemp("make-run-keys"), "keys") as run:
        yield run


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_a_runnable_block_runs_verbatim(
    block: Block, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    run: Run = request.getfixturevalue("make_run_keys" if block.keys else "make_run")
    code = block.code.replace(DEFAULT, run.url)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JOBGATE_")}
    if block.keys:  # `jobgate keys ...` in the block must reach that run's database
        env["JOBGATE_DATA_DIR"] = str(run.data_dir)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    if block.lang == "sh":
        args = ["bash", "-euo", "pipefail", "-c", code]
    else:
        args = [sys.executable, "-c", code]
    done = subprocess.run(
        args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=START_TIMEOUT_S * 6
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, f"{block.where} exited {done.returncode}:\n{said[-3000:]}"
    assert "Traceback" not in said, said[-3000:]
    if block.expect:
        assert block.expect in done.stdout, (
            f"{block.where}: no {block.expect!r} in:\n{said[-3000:]}"
        )
