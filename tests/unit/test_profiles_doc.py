"""docs/profiles.md's worked example is a working profile, and `check` prints what it says."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2

from app.providers.authoring.check_command import run
from app.providers.calls.client import ProviderClient
from app.providers.calls.types import Outcome
from app.providers.language.loader import load_profile
from app.providers.language.words import RemoteClass, SingleCreate

DOC = (Path(__file__).resolve().parents[2] / "docs" / "profiles.md").read_text(encoding="utf-8")
WALK = DOC[DOC.index("## Add your provider in ten minutes") : DOC.index("**6. Check it**")]


def example(tmp_path: Path) -> Path:
    """The walk-through's YAML blocks, in order: one profile."""
    blocks = re.findall(r"```yaml\n(.*?)```", WALK, flags=re.S)
    path = tmp_path / "assemblyai.yaml"
    path.write_text("".join(blocks))
    return path


def test_the_check_output_in_the_docs_is_what_check_prints(tmp_path: Path) -> None:
    code, text = run(example(tmp_path), {}, None)
    assert code == 0
    shown = re.search(r"```console\n\$ jobgate profiles check \S+\n(.*?)```", DOC, flags=re.S)
    assert shown is not None
    printed = text.split("== cancel ==")[0] if "== cancel ==" in text else text
    assert printed.strip() == shown.group(1).strip()


def test_the_typo_message_in_the_docs_is_the_real_one(tmp_path: Path) -> None:
    path = example(tmp_path)
    path.write_text(path.read_text().replace("{job_id}", "{jobid}"))
    code, text = run(path, {}, None)
    assert code == 2
    assert "status.path: unknown placeholder 'jobid'; allowed here: input, job_id, kind" in text


async def test_the_example_drives_a_transcript_to_its_end(tmp_path: Path) -> None:
    profile = load_profile(example(tmp_path), {})
    assert profile.single_create is SingleCreate.NONE
    answers = iter(
        [
            {"id": "tr_1", "status": "queued", "audio_url": "https://a/x.mp3"},
            {"id": "tr_1", "status": "processing"},
            {"id": "tr_1", "status": "completed", "text": "Hello.", "words": []},
            {"id": "tr_2", "status": "queued"},
            {"id": "tr_2", "status": "error", "error": "Download error, unable to access file"},
        ]
    )
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=next(answers))

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http:
        client = ProviderClient(http, {"ASSEMBLYAI_API_KEY": "key-1"})
        made = await client.create(
            profile, "transcript", {"audio_url": "https://a/x.mp3", "validation": {}},
            token="t", client_reference="op_1", trace_id="t",
        )  # fmt: skip
        running = await client.status(profile, "tr_1", trace_id="t")
        done = await client.status(profile, "tr_1", trace_id="t")
        await client.create(profile, "transcript", {"audio_url": "x"}, token="t",
                            client_reference="op_2", trace_id="t")  # fmt: skip
        failed = await client.status(profile, "tr_2", trace_id="t")
    assert seen[0].headers["Authorization"] == "key-1"
    assert seen[0].content == b'{"audio_url":"https://a/x.mp3"}'  # no gateway options sent
    assert (made.outcome, made.remote_job_id, made.remote_class) == (
        Outcome.OK,
        "tr_1",
        RemoteClass.PENDING,
    )
    assert running.remote_class is RemoteClass.RUNNING
    assert done.remote_class is RemoteClass.SUCCEEDED and done.result["text"] == "Hello."
    assert failed.remote_class is RemoteClass.FAILED
    assert failed.error == {"message": "Download error, unable to access file"}
