"""`jobgate profiles check`: every bundled profile validates and shows its requests, with
the credential masked and nothing sent; an invalid profile exits 2 naming its fields."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.providers.language.loader import BUILTIN_DIR
from tests.support.timing import budget

BUNDLED = sorted(BUILTIN_DIR.glob("*.yaml"))
SECRET = "sk-live-DO-NOT-PRINT"


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_every_bundled_profile_checks_and_masks_its_credential(
    path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "REPLICATE_API_TOKEN",
                 "GOOGLE_OAUTH_ACCESS_TOKEN", "AZURE_LANGUAGE_KEY",
                 "JOBGATE_MOCK_PROVIDER_TOKEN"):  # fmt: skip
        monkeypatch.setenv(name, SECRET)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")
    assert main(["profiles", "check", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"profile {path.stem}: valid" in out
    assert SECRET not in out
    assert "== status ==" in out and "cannot be built" not in out
    for line in out.splitlines():
        if line.strip().lower().startswith(("authorization:", "x-api-key:", "ocp-apim")):
            assert "[redacted]" in line


def test_the_openai_profile_shows_the_upload_then_the_batch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sample = {"endpoint": "/v1/embeddings", "requests": [{"custom_id": "z", "method": "POST",
              "url": "/v1/embeddings", "body": {"model": "m", "input": "hi"}}]}  # fmt: skip
    path = BUILTIN_DIR / "openai_batch.yaml"
    assert main(["profiles", "check", str(path), "--input", json.dumps(sample)]) == 0
    out = capsys.readouterr().out
    upload = out.index("== kind batch: prepare upload (step 1 of 2) ==")
    create = out.index("== kind batch: create ==")
    assert upload < create
    assert "POST https://api.openai.com/v1/files" in out
    assert '"endpoint": "/v1/embeddings"' in out and '"custom_id": "z"' in out
    assert "NOT SET" in out or "(set;" in out
    assert "single_create: lookup" in out


def test_an_invalid_profile_exits_2_with_one_line_per_field(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "version: 2\nname: broken\nbase_url: http://127.0.0.1:9\n"
        "kinds: {report: {create: {method: POST}}}\n"
        'status: {path: "/jobs/{id}"}\npointers: {job_id: /id, state: /state}\n'
        "states: {done: succeeded}\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "app.cli", "profiles", "check", str(broken)],
        capture_output=True,
        text=True,
        timeout=budget(60),
    )
    assert r.returncode == 2, r.stderr
    assert f"{broken}: kinds.report.create.path: field required" in r.stderr
    assert r.stdout == ""


def test_bad_input_json_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    path = BUILTIN_DIR / "mock.yaml"
    assert main(["profiles", "check", str(path), "--input", "{nope"]) == 2
    assert "--input is not JSON" in capsys.readouterr().err
