"""Profile language v2: per-field errors, origins, and the requests the profiles build."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from app.providers.answers.documents import LineReader
from app.providers.calls import prepare
from app.providers.calls.client import ProviderClient
from app.providers.calls.prepare import BuildError, Values
from app.providers.calls.types import Outcome
from app.providers.language.loader import ProfileError, load_profile, load_profiles
from app.providers.language.profile import Profile
from app.providers.language.spec_results import DocumentSpec

BASE: dict[str, Any] = {
    "version": 2,
    "name": "acme",
    "base_url": "https://api.acme.test",
    "credentials": {"env": "ACME_KEY"},
    "kinds": {"report": {"create": {"path": "/jobs", "body": {"input": "$input"}}}},
    "status": {"path": "/jobs/{job_id}"},
    "result": {"path": "/jobs/{job_id}/result"},
    "pointers": {"job_id": "/id", "state": "/status"},
    "states": {"done": "succeeded"},
}


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "acme.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def changed(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"status": {"path": "/jobs/{id}"}}, "status.path", "unknown placeholder 'id'"),
        (
            {"result": {"documents": [{"path": "/f/{output_file_id}/content"}]}},
            "result.documents.0.path",
            "unknown placeholder 'output_file_id'",
        ),
        ({"headers": {"X-Key": "{job_id}"}}, "headers", "unknown placeholder 'job_id'"),
        ({"vars": {"job_id": {"default": "x"}}}, "vars.job_id", "a name the gateway supplies"),
        ({"vars": {"p": {}}}, "vars.p", "give env, default or both"),
        ({"origins": [{"url": "https://cdn.test/path"}]}, "origins.0.url", "without a path"),
        (
            {"state_rules": [{"when": {"pointer": "/a"}, "then": "succeeded"}]},
            "state_rules.0.when.0",
            "give a test",
        ),
        ({"counts": {"total": "/a * /b"}}, "counts.total", "expected '+' or '-'"),
        ({"pointers": {"job_id": "/id"}, "states": {}}, "pointers.state", "state_rules, or both"),
        (
            {
                "kinds": {
                    "r": {
                        "create": {
                            "path": "/j",
                            "status_url": {"header": "Location", "pattern": "x"},
                        }
                    }
                }
            },
            "kinds.r.create.status_url.pattern",
            "exactly one group",
        ),  # fmt: skip
        (
            {"result": {"documents": [{"path": "/a", "url": "{x}"}]}},
            "result.documents.0",
            "exactly one of path or url",
        ),
        ({"client_reference": {"location": "header"}}, "client_reference", "needs a header"),
    ],
)
def test_errors_name_the_file_and_the_dotted_field(
    tmp_path: Path, changes: dict[str, Any], field: str, words: str
) -> None:
    path = write(tmp_path, changed(**changes))
    with pytest.raises(ProfileError) as info:
        load_profile(path, {})
    assert any(p.startswith(f"{path}: {field}: ") and words in p for p in info.value.problems), (
        info.value.problems
    )


def test_every_problem_is_reported_at_once_and_a_v1_file_is_named(tmp_path: Path) -> None:
    data = changed(status={"path": "/jobs/{id}"}, headers={"X": "{nope}"})
    del data["version"]
    with pytest.raises(ProfileError) as info:
        load_profile(write(tmp_path, data), {})
    problems = info.value.problems
    assert "version: must be 2" in problems[0] and "v1" in problems[0]
    assert any("status.path" in p for p in problems) and any("headers" in p for p in problems)


def test_a_pasted_secret_is_never_echoed(tmp_path: Path) -> None:
    data = changed(headers={"Authorization": "Bearer sk-live-DO-NOT-LEAK {oops}"})
    with pytest.raises(ProfileError) as info:
        load_profile(write(tmp_path, data), {})
    assert "DO-NOT-LEAK" not in str(info.value)


def test_bundled_profiles_load_without_any_credential() -> None:
    profiles = load_profiles(None, {})
    expected = {"openai_batch", "anthropic_message_batches", "replicate_predictions",
                "google_translate", "azure_operation_location", "vertex_veo",
                "fal_queue"}  # fmt: skip
    assert expected <= set(profiles)
    for name in expected:
        assert profiles[name].unavailable({}) is not None  # usable only with its credential
        assert profiles[name].credentials is not None and not profiles[name].credentials.optional


def test_origins_decide_who_sees_the_credential() -> None:
    profile = Profile.model_validate(
        changed(
            origins=[
                {"url": "https://files.acme.test"},
                {"url": "https://eu.acme.test:8443", "credentials": True},
            ]
        )  # fmt: skip
    )
    assert profile.origin_of("https://api.acme.test/x?y=1") == "own"
    assert profile.origin_of("https://API.acme.test:443/x") == "own"
    assert profile.origin_of("https://eu.acme.test:8443/x") == "credentials"
    assert profile.origin_of("https://files.acme.test/f") == "anonymous"
    assert profile.origin_of("http://api.acme.test/x") is None  # another scheme
    assert profile.origin_of("https://api.acme.test.evil/x") is None
    assert profile.origin_of("https://u:p@api.acme.test/x") is None
    assert profile.origin_of("ftp://api.acme.test/x") is None


async def test_an_anonymous_origin_gets_no_credential_and_no_profile_headers() -> None:
    profile = Profile.model_validate(
        changed(origins=[{"url": "https://files.acme.test"}], headers={"X-Version": "1"})
    )
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json={"id": "j", "status": "done"})

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http:
        client = ProviderClient(http, {"ACME_KEY": "k-secret"})
        await client.status(profile, "j", trace_id="t", status_url="https://files.acme.test/s")
        await client.status(profile, "j", trace_id="t", status_url="https://api.acme.test/s")
        refused = await client.status(profile, "j", trace_id="t", status_url="https://x.test/s")
    assert [r.url.host for r in seen] == ["files.acme.test", "api.acme.test"]
    assert "Authorization" not in seen[0].headers and "X-Version" not in seen[0].headers
    assert seen[1].headers["Authorization"] == "Bearer k-secret"
    assert refused.outcome is Outcome.REJECTED and refused.exchange.status_code is None


def test_the_reference_can_go_into_an_array_element_and_the_token_into_a_query() -> None:
    profile = Profile.model_validate(
        changed(
            idempotency={"location": "query", "param": "request_id"},
            client_reference={"location": "body", "pointer": "/requests/0/custom_id"},
            kinds={"batch": {"create": {"path": "/b", "body": {"requests": "$input/requests"}}}},
        )
    )
    values = Values(profile, {}, {"input": {"requests": [{"custom_id": "x", "p": 1}]},
                                  "client_reference": "op_1", "token": "tok"})  # fmt: skip
    built = prepare.create(profile, profile.kinds["batch"].create, values)
    assert built.json_body == {"requests": [{"custom_id": "op_1", "p": 1}]}
    assert built.params == {"request_id": "tok"}
    values.known["input"] = {"requests": []}
    with pytest.raises(BuildError, match="does not fit"):
        prepare.create(profile, profile.kinds["batch"].create, values)


def test_a_followed_link_keeps_its_query_and_merges_new_parameters() -> None:
    profile = Profile.model_validate(changed(query={"api-version": "1"}))
    ep = profile.status
    values = Values(profile, {}, {"job_id": "j"})
    built = prepare.request(profile, "status", ep, values)
    assert (built.url, built.params) == ("https://api.acme.test/jobs/j", {"api-version": "1"})
    link = "https://api.acme.test/jobs/j?api-version=2&top=5"
    followed = prepare.request(profile, "status", ep, values, url=link, params={"skip": "5"})
    assert followed.url == "https://api.acme.test/jobs/j?api-version=2&top=5&skip=5"
    assert followed.params is None


def test_lines_are_judged_one_by_one_and_reading_stops_at_the_bound() -> None:
    spec = DocumentSpec.model_validate(
        {"path": "/r", "format": "jsonl", "items": {"id": "/id", "status": "/s",
                                                     "succeeded": ["ok"], "error": "/e"}}
    )  # fmt: skip
    lines = [{"id": 1, "s": "ok"}, {"id": 2, "s": "bad", "e": {"m": "x"}}, {"id": 3, "s": "ok"}]
    data = "".join(json.dumps(x) + "\n" for x in lines).encode()
    reader = LineReader(spec, limit=10_000)
    for i in range(0, len(data), 7):  # chunks that split lines anywhere
        assert reader.feed(data[i : i + 7])
    reader.finish()
    info = reader.info("u")
    assert [x["id"] for x in reader.ok] == [1, 3]
    assert reader.failed == [{"id": 2, "status": "bad", "error": {"m": "x"}, "document": "result"}]
    assert (info.lines, info.succeeded, info.failed, info.complete) == (3, 2, 1, True)
    small = LineReader(spec, limit=40)
    assert small.feed(data[:30]) and not small.feed(data[30:60])
    assert small.truncated and small.size == 30 and not small.info(None).complete
    broken = LineReader(spec, limit=10_000)
    assert not broken.feed(b'{"id": 1}\nnot json\n')
    assert broken.error and "line 2" in broken.error
