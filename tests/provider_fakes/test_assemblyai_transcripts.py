"""The AssemblyAI transcripts fake answers as its reference shows (docs/provider-fakes.md,
"assemblyai_transcripts"): the raw key, `{"error": ...}` bodies, the transcript object and
its queued -> processing -> completed | error lifecycle, one step per read."""

from __future__ import annotations

from jobgate_fakes.providers import create_app
from jobgate_fakes.providers.settings import FakeSettings
from tests.provider_fakes.conftest import client, stats

KEY = "aai-key-1"


async def test_a_transcript_goes_queued_processing_completed_one_read_at_a_time() -> None:
    app = create_app("assemblyai_transcripts", FakeSettings(api_key=KEY))
    async with client(app, authorization=KEY) as c:
        made = await c.post(
            "/v2/transcript",
            json={"audio_url": "https://assembly.ai/wildfires.mp3", "speech_model": "best"},
        )
        assert made.status_code == 200, made.text
        body = made.json()
        assert body["status"] == "queued" and body["text"] is None
        assert body["speech_model"] == "best" and body["error"] is None
        seen = [(await c.get(f"/v2/transcript/{body['id']}")).json() for _ in range(3)]
        counted = await stats(c)
    assert [s["status"] for s in seen] == ["processing", "completed", "completed"]
    assert seen[1]["text"].startswith("Smoke") and seen[1]["words"][0]["text"] == "Smoke"
    assert counted["create_calls"] == 1 and counted["jobs"][body["id"]]["get_calls"] == 3


async def test_an_unreachable_audio_url_ends_in_error_with_the_reason() -> None:
    app = create_app("assemblyai_transcripts", FakeSettings(api_key=KEY))
    async with client(app, authorization=KEY) as c:
        tid = (
            await c.post("/v2/transcript", json={"audio_url": "https://x.test/missing.mp3"})
        ).json()["id"]
        await c.get(f"/v2/transcript/{tid}")
        last = (await c.get(f"/v2/transcript/{tid}")).json()
    assert last["status"] == "error"
    assert last["error"] == "Download error, unable to download https://x.test/missing.mp3"


async def test_key_body_and_id_refusals_are_error_bodies() -> None:
    app = create_app("assemblyai_transcripts", FakeSettings(api_key=KEY))
    async with client(app, authorization="Bearer " + KEY) as c:
        wrong = await c.post("/v2/transcript", json={"audio_url": "https://a.test/a.mp3"})
    async with client(app, authorization=KEY) as c:
        no_url = await c.post("/v2/transcript", json={"language_code": "en"})
        unknown = await c.get("/v2/transcript/nope")
        counted = await stats(c)
    assert wrong.status_code == 401 and "API token missing/invalid" in wrong.json()["error"]
    assert no_url.status_code == 400 and "audio_url" in no_url.json()["error"]
    assert unknown.status_code == 404 and set(unknown.json()) == {"error"}
    assert counted["jobs"] == {}
