"""Requests of any shape in the profile language: reads by POST with a body, paths over the
input, the endpoint's query at a followed URL, credential schemes, `nothing_created` by
status or text, several error pointers joined (docs/profiles.md, "Requests of any shape")."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from app.providers.answers import extract
from app.providers.authoring import check_command
from app.providers.calls import prepare
from app.providers.calls.client import ProviderClient
from app.providers.calls.prepare import Values
from app.providers.language.profile import Profile

SECRET = "sk-live-0123456789abcdef"
BASE: dict[str, Any] = {
    "version": 2,
    "name": "acme",
    "base_url": "https://api.acme.test",
    "credentials": {"env": "ACME_KEY"},
    "vars": {"project": {"env": "ACME_PROJECT", "default": "p1"}},
    "kinds": {
        "video": {
            "example": {"model": "veo-2", "instances": [{"prompt": "a cat"}]},
            "create": {"path": "/v1/projects/{project}/models/{input/model}:predictLongRunning"},
        }
    },
    "status": {
        "method": "POST",
        "path": "/v1/projects/{project}/models/{input/model}:fetchPredictOperation",
        "body": {"operationName": "$job_id"},
    },
    "pointers": {"job_id": "/name", "state": "/done", "inline_result": "/response"},
    "states": {"true": "succeeded"},
}


def profile(**changes: Any) -> Profile:
    data = copy.deepcopy(BASE)
    data.update(changes)
    return Profile.model_validate(data)


def problems_of(**changes: Any) -> str:
    with pytest.raises(ValueError) as caught:
        profile(**changes)
    return str(caught.value)


def test_a_status_read_by_post_sends_its_body_with_the_job_id_and_the_input_in_the_path() -> None:
    p = profile()
    values = Values(p, {}, {"job_id": "projects/p1/operations/42", "input": {"model": "veo-2"}})
    built = prepare.request(p, "status", p.status, values)
    assert (built.method, built.url) == (
        "POST",
        "https://api.acme.test/v1/projects/p1/models/veo-2:fetchPredictOperation",
    )
    assert built.has_body and built.json_body == {"operationName": "projects/p1/operations/42"}


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_a_read_by_post_without_a_body_is_refused_at_load(method: str) -> None:
    status = {"method": method, "path": "/ops/{job_id}"}
    assert "status.body" in problems_of(status=status)
    assert "needs the body" in problems_of(status=status)
    doc = {"documents": [{"method": method, "path": "/r/{job_id}"}]}
    assert "result.documents.0.body" in problems_of(result=doc)


def test_a_get_with_a_body_is_refused_and_a_body_names_only_known_values() -> None:
    assert "sends no body" in problems_of(status={"path": "/o/{job_id}", "body": {"a": 1}})
    bad = {"method": "POST", "path": "/o", "body": {"operationName": "$name"}}
    assert "unknown placeholder 'name'" in problems_of(status=bad)


def test_profiles_check_refuses_a_post_status_without_a_body_and_accepts_vertex(
    tmp_path: Path,
) -> None:
    data = copy.deepcopy(BASE)
    data["status"] = {"method": "POST", "path": "/v1/{job_id}:fetchPredictOperation"}
    path = tmp_path / "acme.yaml"
    path.write_text(yaml.safe_dump(data))
    code, text = check_command.run(path, {}, None)
    assert code == 2 and "status.body" in text, text
    bundled = Path("app/providers/profiles/vertex_veo.yaml")
    if bundled.exists():  # the bundled Vertex profile (added beside this language change)
        code, text = check_command.run(bundled, {"GOOGLE_CLOUD_PROJECT": "p"}, None)
        assert code == 0, text
        assert ":fetchPredictOperation" in text and '"operationName": "JOB_ID"' in text


def test_the_status_query_goes_to_a_followed_status_url_without_doubling_its_own() -> None:
    p = profile(status={"path": "/ops/{job_id}", "query": {"logs": "1", "api-version": "9"}})
    values = Values(p, {}, {"job_id": "j1"})
    url = "https://api.acme.test/queue/requests/j1/status?api-version=2024"
    built = prepare.request(p, "status", p.status, values, url=url)
    assert built.params is None
    assert built.url == "https://api.acme.test/queue/requests/j1/status?api-version=2024&logs=1"
    plain = "https://api.acme.test/queue/requests/j1/status"
    assert prepare.request(p, "status", p.status, values, url=plain).params == {
        "logs": "1",
        "api-version": "9",
    }


def test_a_path_may_use_the_input_keeping_its_slashes() -> None:
    p = profile(status={"path": "/{input/app}/requests/{job_id}/status"})
    values = Values(p, {}, {"job_id": "r-1", "input": {"app": "fal-ai/flux"}})
    built = prepare.request(p, "status", p.status, values)
    assert built.url == "https://api.acme.test/fal-ai/flux/requests/r-1/status"


@pytest.mark.parametrize(
    ("spec", "header", "value"),
    [
        ({"env": "ACME_KEY"}, "Authorization", f"Bearer {SECRET}"),  # the old default
        ({"env": "ACME_KEY", "type": "header", "header": "x-api-key"}, "x-api-key", SECRET),
        (
            {"env": "ACME_KEY", "type": "header", "header": "Authorization", "prefix": "Key "},
            "Authorization",
            f"Key {SECRET}",
        ),
    ],
)
def test_credential_schemes_resolve_to_the_header_they_name(
    spec: dict[str, Any], header: str, value: str
) -> None:
    found = profile(credentials=spec).resolve_credential({"ACME_KEY": SECRET})
    assert found is not None and found.param is None
    assert (found.header, found.value.reveal()) == (header, value)
    assert SECRET not in repr(found)


def test_credential_fields_that_do_not_fit_their_type_are_refused() -> None:
    assert "needs a param" in problems_of(credentials={"env": "K", "type": "query"})
    assert "prefix is for type header" in problems_of(credentials={"env": "K", "prefix": "Key "})
    assert "param is for type query" in problems_of(credentials={"env": "K", "param": "key"})


async def _send(p: Profile, env: dict[str, str], answer: dict[str, Any]) -> Any:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=answer)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http:
        client = ProviderClient(http, env)
        res = await client.status(p, "op-1", trace_id="t", input={"model": "veo-2"})
    return res, seen


async def test_a_query_credential_is_sent_and_never_recorded() -> None:
    p = profile(credentials={"env": "ACME_KEY", "type": "query", "param": "key"})
    res, seen = await _send(p, {"ACME_KEY": SECRET}, {"name": "op-1", "echo": SECRET})
    assert seen[0].url.params["key"] == SECRET
    assert "authorization" not in seen[0].headers
    assert json.loads(seen[0].content) == {"operationName": "op-1"}
    recorded = json.dumps(res.exchange.to_dict())
    assert SECRET not in recorded and "[redacted]" in recorded


async def test_a_key_given_as_a_whole_header_is_masked_in_check_and_history(
    tmp_path: Path,
) -> None:
    whole = f"Key {SECRET}"  # the env var holds the whole header value, prefix and all
    spec = {"env": "ACME_KEY", "type": "header", "header": "X-Fal-Auth"}
    p = profile(credentials=spec)
    res, seen = await _send(p, {"ACME_KEY": whole}, {"name": "op-1", "said": whole})
    assert seen[0].headers["X-Fal-Auth"] == whole
    recorded = json.dumps(res.exchange.to_dict())
    assert SECRET not in recorded and "Key " + SECRET not in recorded
    # A profile that (wrongly) fills Authorization from a variable is masked in check too.
    data = copy.deepcopy(BASE)
    data["credentials"] = spec
    data["vars"]["fal_key"] = {"env": "FAL_KEY"}
    data["headers"] = {"Authorization": "Key {fal_key}"}
    path = tmp_path / "acme.yaml"
    path.write_text(yaml.safe_dump(data))
    code, text = check_command.run(path, {"ACME_KEY": whole, "FAL_KEY": SECRET}, None)
    assert code == 0, text
    assert SECRET not in text
    assert "X-Fal-Auth: [redacted]" in text and "Authorization: [redacted]" in text


def test_check_shows_the_prefix_and_where_the_credential_goes(tmp_path: Path) -> None:
    data = copy.deepcopy(BASE)
    data["credentials"] = {"env": "FAL_KEY", "type": "header", "header": "Authorization",
                           "prefix": "Key "}  # fmt: skip
    path = tmp_path / "acme.yaml"
    path.write_text(yaml.safe_dump(data))
    code, text = check_command.run(path, {"FAL_KEY": SECRET}, None)
    assert code == 0 and SECRET not in text
    assert "Authorization: Key [redacted]" in text
    assert "sent as header Authorization (set;" in text


def test_nothing_created_by_status_alone_or_by_a_piece_of_free_text() -> None:
    rules = [{"status": 429}, {"status": 503, "contains": ["capacity", "try again"]}]
    p = profile(idempotency={"location": "none", "nothing_created": rules})
    idem = p.idempotency
    assert idem.proves_nothing_created(429, None, "Too Many Requests") is not None
    assert idem.proves_nothing_created(503, None, "Out of CAPACITY, sorry") is not None
    assert idem.proves_nothing_created(503, None, "internal error") is None
    assert idem.proves_nothing_created(500, None, "capacity") is None
    assert "a body containing 'capacity'" in idem.nothing_created[1].describe()
    old = {"status": 529, "pointer": "/error/type", "equals": "overloaded_error"}
    kept = profile(idempotency={"location": "none", "nothing_created": [old]}).idempotency
    assert kept.proves_nothing_created(529, {"error": {"type": "overloaded_error"}})
    assert not kept.proves_nothing_created(529, None, "overloaded_error")
    assert "pointer and equals go together" in problems_of(
        idempotency={"location": "none", "nothing_created": [{"status": 429, "pointer": "/x"}]}
    )


def test_several_error_pointers_are_joined_into_one_reason() -> None:
    where = ["/error", "/response/raiMediaFilteredReasons"]
    p = profile(pointers={**BASE["pointers"], "error": where})
    filtered = {"response": {"raiMediaFilteredReasons": ["Unsafe content.", "Violence."]}}
    assert extract.error_in(p, filtered) == {"message": "Unsafe content; Violence"}
    both = {"error": {"code": 3, "message": "Bad prompt."}, **filtered}
    assert extract.error_in(p, both) == {
        "code": 3,
        "message": "Bad prompt; Unsafe content; Violence",
    }
    assert extract.error_in(p, {"done": True}) is None
    one = profile(pointers={**BASE["pointers"], "error": "/error"})
    assert extract.error_in(one, both) == {"code": 3, "message": "Bad prompt."}


def test_result_failure_statuses_are_4xx_that_mean_failed_never_try_later() -> None:
    doc = {"url": "{response_url}"}
    fields = {**BASE["pointers"], "fields": {"response_url": "/response_url"}}
    ok = profile(result={"documents": [doc], "job_failed_statuses": [422]}, pointers=fields)
    assert ok.result is not None and ok.result.job_failed_statuses == [422]
    v1 = profile(result={"path": "/r/{job_id}", "job_failed_statuses": [400, 422]})
    assert v1.result is not None and v1.result.job_failed_statuses == [400, 422]
    assert "means 'try later'" in problems_of(result={"path": "/r", "job_failed_statuses": [429]})
    assert "twice" in problems_of(result={"path": "/r", "job_failed_statuses": [422, 422]})
    assert "less than or equal to 499" in problems_of(
        result={"path": "/r", "job_failed_statuses": [500]}
    )
