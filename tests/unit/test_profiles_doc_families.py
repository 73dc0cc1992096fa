"""docs/profiles.md's worked examples are the bundled profiles, and the third API it adds
to each family loads as written and builds the requests the text describes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from app.providers.authoring import check_command
from app.providers.calls import prepare
from app.providers.calls.prepare import Values
from app.providers.language.loader import load_profile
from app.providers.language.words import RemoteClass

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
SECTION = DOC.split("## Worked examples: Vertex AI Veo and the fal queue", 1)[1].split("\n## ", 1)[
    0
]
BUNDLED = ROOT / "app" / "providers" / "profiles"


def blocks(lang: str) -> list[str]:
    return [str(b) for b in re.findall(rf"```{lang}\n(.*?)```", SECTION, re.S)]


def block(lang: str, first_line: str) -> str:
    [found] = [b for b in blocks(lang) if b.startswith(first_line)]
    return found


def bundled(name: str) -> dict[str, Any]:
    return dict(yaml.safe_load((BUNDLED / f"{name}.yaml").read_text()))


def test_the_worked_examples_say_what_the_bundled_profiles_say() -> None:
    vertex_doc, fal_doc = (yaml.safe_load(b) for b in blocks("yaml")[:2])
    vertex, fal = bundled("vertex_veo"), bundled("fal_queue")
    assert vertex_doc["status"] == vertex["status"]
    kind = dict(vertex["kinds"]["generate_videos"])
    kind.pop("example")
    assert vertex_doc["kinds"]["generate_videos"] == kind
    assert vertex_doc["pointers"].items() <= vertex["pointers"].items()
    assert vertex_doc["state_rules"] == vertex["state_rules"]
    for key in ("credentials", "idempotency", "cancel", "result", "states"):
        assert fal_doc[key] == fal[key], key
    assert fal_doc["status"] == {k: v for k, v in fal["status"].items() if k != "method"}
    assert fal_doc["kinds"]["run"]["create"] == fal["kinds"]["run"]["create"]
    assert fal_doc["pointers"].items() <= fal["pointers"].items()
    assert fal_doc["state_rules"][0] in fal["state_rules"]


def test_a_third_video_api_reads_by_get_with_its_key_masked(tmp_path: Path) -> None:
    (tmp_path / "gemini_veo.yaml").write_text(block("yaml", "# gemini_veo.yaml"))
    (tmp_path / "gemini_veo.py").write_text(block("python", "# gemini_veo.py"))
    profile = load_profile(tmp_path / "gemini_veo.yaml", {})
    values = Values(profile, {}, {"job_id": "models/veo-3/operations/abc"})
    read = prepare.request(profile, "status", profile.status, values)
    assert (read.method, read.url, read.has_body) == (
        "GET",
        "https://generativelanguage.googleapis.com/v1beta/models/veo-3/operations/abc",
        False,
    )
    code, text = check_command.run(
        tmp_path / "gemini_veo.yaml", {"GEMINI_API_KEY": "AIza-s3cr3t"}, None
    )
    assert code == 0 and "AIza-s3cr3t" not in text and "x-goog-api-key: [redacted]" in text
    answer = {
        "name": "models/veo-3/operations/abc",
        "done": True,
        "response": {"generateVideoResponse": {
            "generatedSamples": [{"video": {"uri": "https://v/1"}}], "raiMediaFilteredCount": 1,
        }},
    }  # fmt: skip
    hooks = profile.hooks
    assert hooks.classify({"name": "x"}, None) is RemoteClass.RUNNING
    counts = hooks.count(answer)
    assert counts is not None and (counts.total, counts.succeeded, counts.failed) == (2, 1, 1)
    assert hooks.result(answer) == [{"uri": "https://v/1"}]


def test_a_third_queue_names_the_inputs_endpoint_in_every_path(tmp_path: Path) -> None:
    (tmp_path / "runpod.yaml").write_text(block("yaml", "# runpod.yaml"))
    profile = load_profile(tmp_path / "runpod.yaml", {})
    values = Values(profile, {}, {"job_id": "j-1", "input": {"endpoint_id": "ep9", "input": {}}})
    status = prepare.request(profile, "status", profile.status, values)
    assert profile.cancel is not None
    cancel = prepare.request(profile, "cancel", profile.cancel, values)
    assert status.url == "https://api.runpod.ai/v2/ep9/status/j-1"
    assert (cancel.method, cancel.url) == ("POST", "https://api.runpod.ai/v2/ep9/cancel/j-1")
    assert profile.remote_class("TIMED_OUT") is RemoteClass.FAILED
