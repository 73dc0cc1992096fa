"""Every fake: built by name, controlled through /_fake/, and runnable as a process."""

from __future__ import annotations

import time
from pathlib import Path

import httpx2
import pytest

from app.cli import build_parser
from jobgate_fakes.providers import FAKES, create_app
from jobgate_fakes.providers.settings import FakeSettings
from tests.provider_fakes.conftest import client
from tests.support.processes import Process, free_port
from tests.support.timing import PROCESS_WORK_S, budget


@pytest.mark.parametrize("name", sorted(FAKES))
async def test_control_api_and_unknown_paths(name: str) -> None:
    app = create_app(name, FakeSettings(api_key="k"))
    async with client(app) as c:
        empty = (await c.get("/_fake/stats")).json()
        bad_op = await c.post("/_fake/faults", json={"op": "nope", "kind": "drop"})
        bad_kind = await c.post("/_fake/faults", json={"op": "list", "kind": "explode"})
        unknown = await c.get("/no/such/path")
        reset = await c.post("/_fake/reset")
    assert empty == {
        "create_calls": 0,
        "creates_by_reference": {},
        "jobs_by_reference": {},
        "jobs": {},
        "list_calls": 0,
        "calls": {},
    }
    assert bad_op.status_code == 400 and "unknown op" in bad_op.text
    assert bad_kind.status_code == 400
    assert unknown.status_code == 404 and unknown.headers["content-type"] == "application/json"
    assert reset.json() == {"reset": True}


async def test_faults_are_used_up_in_order() -> None:
    app = create_app("openai_batch", FakeSettings(api_key="k"))
    async with client(app, Authorization="Bearer k") as c:
        await c.post(
            "/_fake/faults",
            json={
                "faults": [
                    {"op": "list", "kind": "rate_limit", "times": 2},
                    {"op": "list", "kind": "error_before", "status": 502},
                ]
            },
        )
        pending = (await c.get("/_fake/faults")).json()["pending"]
        codes = [(await c.get("/v1/batches")).status_code for _ in range(4)]
    assert [f["kind"] for f in pending] == ["rate_limit", "error_before"]
    assert codes == [429, 429, 502, 200]


def test_cli_knows_every_fake(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["fake-provider", "google_translate", "--port", "9999"])
    assert (args.name, args.host, args.port) == ("google_translate", "127.0.0.1", 9999)
    # The fakes are imported only when one is served (the gateway's image has none), so an
    # unknown name is refused when the command runs: exit 2, naming every fake.
    unknown = build_parser().parse_args(["fake-provider", "nope"])
    assert unknown.func(unknown) == 2
    said = capsys.readouterr().out
    assert "no fake called 'nope'" in said
    assert all(name in said for name in FAKES)


def test_fake_provider_runs_as_a_process(tmp_path: Path) -> None:
    port = free_port()
    env = {"JOBGATE_FAKE_API_KEY": "from-env"}
    args = ["fake-provider", "anthropic_message_batches", "--port", str(port)]
    proc = Process(args, env, tmp_path / "fake.log").start()
    url = f"http://127.0.0.1:{port}"
    try:
        ends = time.monotonic() + budget(PROCESS_WORK_S)
        while True:
            try:
                stats = httpx2.get(f"{url}/_fake/stats", timeout=1)
                break
            except httpx2.HTTPError:
                assert proc.alive() and time.monotonic() < ends, proc.log.read_text()[-2000:]
                time.sleep(0.05)
        headers = {"x-api-key": "from-env", "anthropic-version": "2023-06-01"}
        listed = httpx2.get(f"{url}/v1/messages/batches", headers=headers, timeout=5)
    finally:
        proc.kill()
    assert stats.status_code == 200
    assert listed.status_code == 200 and listed.json()["data"] == []


def test_without_the_fakes_their_commands_say_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In the gateway's image (no jobgate_fakes) the commands exist and say why they can't run."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "jobgate_fakes" else real(name, *a),
    )
    for argv in (["mock-provider"], ["fake-provider", "openai_batch"]):
        args = build_parser().parse_args(argv)
        assert args.func(args) == 2
        assert "not installed here (package jobgate_fakes)" in capsys.readouterr().out
