"""docs/profiles.md's adapter examples load as written, and the third Google API they
add counts a failed file as a failure (the doc promises it in a few lines)."""

from __future__ import annotations

import re
from pathlib import Path

from app.providers.answers.outcome import ResultClass, outcome
from app.providers.language.loader import load_profile
from app.providers.language.words import RemoteClass
from tests.support.scripted_provider import profile_yaml

DOC = (Path(__file__).resolve().parents[2] / "docs" / "profiles.md").read_text(encoding="utf-8")


def _block(section: str, lang: str, first_line: str) -> str:
    body = DOC.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    for found in re.findall(rf"```{lang}\n(.*?)```", body, re.S):
        if found.startswith(first_line):
            return str(found)
    raise AssertionError(f"no {lang} block starting {first_line!r} in {section}")


def test_the_speech_profile_and_its_adapter_load_and_count(tmp_path: Path) -> None:
    section = "Google long-running operations"
    (tmp_path / "google_speech.yaml").write_text(_block(section, "yaml", "# google_speech.yaml"))
    (tmp_path / "google_speech.py").write_text(_block(section, "python", "# google_speech.py"))
    profile = load_profile(tmp_path / "google_speech.yaml", {})
    answer = {
        "name": "projects/p/locations/global/operations/1",
        "done": True,
        "response": {"results": {"gs://b/a.wav": {"uri": "gs://b/out/a"},
                                 "gs://b/b.wav": {"error": {"code": 3, "message": "bad"}}}},
    }  # fmt: skip
    hooks = profile.hooks
    assert hooks.classify(answer, None) is RemoteClass.SUCCEEDED
    assert hooks.classify({"name": "x"}, None) is RemoteClass.RUNNING
    counts = hooks.count(answer)
    verdict = outcome(RemoteClass.SUCCEEDED, counts, itemless=profile.itemless)
    assert verdict.result is ResultClass.COMPLETED_WITH_ERRORS
    assert hooks.failed_items(answer) == [
        {"id": "gs://b/b.wav", "error": {"code": 3, "message": "bad"}}
    ]


def test_the_adapter_example_loads(tmp_path: Path) -> None:
    section = "Python adapters"
    (tmp_path / "my_adapter.py").write_text(_block(section, "python", "# my_adapter.py"))
    path = tmp_path / "scripted.yaml"
    path.write_text(profile_yaml("scripted", itemless=True) + "adapter: my_adapter\n")
    hooks = load_profile(path, {}).hooks
    found = hooks.count({"files": [{"error": "x"}, {}]})
    assert found is not None and (found.total, found.succeeded, found.failed) == (2, 1, 1)
