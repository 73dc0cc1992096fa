"""docs/profiles.md's "which names exist where" table is what the code accepts.

For every place the table lists, a template naming each of that row's names is put
there, loaded (the cross-field checks of app/providers/language/profile.py)
and sent through the real client, which renders it (app/providers/expressions/templates.py):
every value must arrive.
An unknown name put in the same place is refused, and the names the refusal allows
must be the row's, no more and no fewer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from app.providers.calls.client import ProviderClient
from app.providers.language.loader import ProfileError, load_profile
from app.providers.language.profile import Profile

DOC = (Path(__file__).resolve().parents[2] / "docs" / "profiles.md").read_text(encoding="utf-8")

# The table's words for the profile's own names, and the one of each this test declares.
OWN = {"variables": "project", "fields": "output_file_id", "captures of earlier steps": "file_id"}
# Each name's value, and how a text template names it (the input is an object: a member).
VALUES = {"input": "IN1", "kind": "r", "client_reference": "REF1", "token": "TOK1",
          "project": "PROJ1", "file_id": "FILE1", "job_id": "JOB1", "reason": "WHY1",
          "output_file_id": "OUT1"}  # fmt: skip
REFS = {"input": "input/x"}
ENV = {"ACME_PROJECT": "PROJ1"}

BASE: dict[str, Any] = {
    "version": 2,
    "name": "acme",
    "base_url": "https://api.acme.test",
    "vars": {"project": {"env": "ACME_PROJECT"}},
    "kinds": {"r": {"create": {"path": "/jobs", "body": {"x": "$input/x"}}}},
    "status": {"path": "/jobs/{job_id}"},
    "cancel": {"path": "/jobs/{job_id}/cancel"},
    "result": {"path": "/jobs/{job_id}/result"},
    "pointers": {"job_id": "/id", "state": "/status", "fields": {"output_file_id": "/out"}},
    "states": {"done": "succeeded"},
}
UPLOAD = {"name": "upload", "path": "/files", "capture": {"file_id": "/id"}}


def rows() -> list[tuple[str, list[str]]]:
    """(place, names) for every place of every row of the table."""
    start = DOC.index("Which names exist where")
    table = DOC[DOC.index("| where | names |", start) :].split("\n\n", 1)[0].splitlines()[2:]
    found = []
    for line in table:
        where, names = (cell.strip() for cell in line.strip("|").split("|"))
        places = re.findall(r"`([^`]+)`", where)
        for item in names.split(", "):
            assert item in OWN or re.fullmatch(r"`\w+`", item), f"unknown name {item!r}"
        listed = [OWN.get(item, item.strip("`")) for item in names.split(", ")]
        found += [(place, listed) for place in places]
    return found


def text(names: list[str]) -> str:
    return "/t/" + "/".join("{" + REFS.get(n, n) + "}" for n in names)


# Where each place is in a profile: put a template there, and say which field a problem names.
Put = Callable[[dict[str, Any], str], str]


def _create(d: dict[str, Any], t: str) -> str:
    d["kinds"]["r"]["create"].update(path=t, prepare=[UPLOAD])
    return "kinds.r.create.path"


def _prepare(d: dict[str, Any], t: str) -> str:
    step = {"name": "next", "path": t, "capture": {"n": "/id"}}
    d["kinds"]["r"]["create"]["prepare"] = [UPLOAD, step]
    return "kinds.r.create.prepare.1.path"


def _reference(d: dict[str, Any], t: str) -> str:
    d["client_reference"] = {"location": "body", "pointer": "/ref", "format": t}
    return "client_reference.format"


def _endpoint(key: str) -> Put:
    def put(d: dict[str, Any], t: str) -> str:
        d[key]["path"] = t
        return f"{key}.path"

    return put


def _documents(d: dict[str, Any], t: str) -> str:
    d["result"] = {"documents": [{"path": t}]}
    return "result.documents.0.path"


def _lookup(d: dict[str, Any], t: str) -> str:
    d["lookup"] = {"path": t, "by": "client_reference", "param": "ref", "jobs": "/jobs"}
    d["client_reference"] = {"location": "header", "header": "X-Ref"}
    return "lookup.path"


def _wide(key: str) -> Put:
    def put(d: dict[str, Any], t: str) -> str:
        d[key] = {"X-T": t}
        return key

    return put


def _secret_fetch(d: dict[str, Any], t: str) -> str:
    fetch = {"path": t, "pointer": "/key"}  # asked while the secret's variable is unset
    d["webhooks"] = {"scheme": "standard", "secret": {"env": "ACME_WH"}, "secret_fetch": fetch}
    return "webhooks.secret_fetch.path"


PLACES: dict[str, Put] = {
    "kinds.<kind>.create": _create,
    "prepare": _prepare,
    "client_reference.format": _reference,
    "status": _endpoint("status"),
    "cancel": _endpoint("cancel"),
    "result.documents[]": _documents,
    "headers": _wide("headers"),
    "query": _wide("query"),
    "lookup": _lookup,
    "webhooks.secret_fetch.path": _secret_fetch,
}


def profile_with(tmp_path: Path, place: str, template: str) -> tuple[Path, str]:
    assert place in PLACES, f"the table names a place this test does not know: {place}"
    data = yaml.safe_load(yaml.safe_dump(BASE))
    field = PLACES[place](data, template)
    path = tmp_path / "acme.yaml"
    path.write_text(yaml.safe_dump(data))
    return path, field


async def sent(profile: Profile, place: str) -> str:
    """Every request the client sends for the place's call, as one text."""
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        answer = {"id": "FILE1" if request.url.path == "/files" else "JOB1", "status": "done",
                  "out": "OUT1", "key": "whsec_a2V5", "jobs": []}  # fmt: skip
        return httpx2.Response(200, json=answer)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http:
        client = ProviderClient(http, ENV)
        t: dict[str, Any] = {"trace_id": "t"}
        job: dict[str, Any] = {"input": {"x": "IN1"}, "kind": "r", **t}  # the operation's own
        if place in ("kinds.<kind>.create", "prepare", "client_reference.format"):
            await client.create(profile, "r", {"x": "IN1"}, token="TOK1",
                                client_reference="REF1", **t)  # fmt: skip
        elif place == "cancel":
            await client.cancel(profile, "JOB1", reason="WHY1", **job)
        elif place == "result.documents[]":
            await client.result(profile, "JOB1", **job)
        elif place == "lookup":
            await client.lookup(profile, token=None, client_reference="REF1", **job)
        elif place == "webhooks.secret_fetch.path":
            await client.webhook_secret(profile, **t)
        else:
            await client.status(profile, "JOB1", **job)
    return "\n".join(f"{r.url} {dict(r.headers)} {r.content.decode()}" for r in seen)


@pytest.mark.parametrize(("place", "names"), rows(), ids=[p for p, _ in rows()])
async def test_each_row_s_names_are_rendered_there_and_no_others_are_allowed(
    tmp_path: Path, place: str, names: list[str]
) -> None:
    path, field = profile_with(tmp_path, place, text(names))
    text_sent = await sent(load_profile(path, ENV), place)
    for name in names:
        assert VALUES[name] in text_sent, (name, text_sent)

    path, field = profile_with(tmp_path, place, "/t/{zzz}")
    with pytest.raises(ProfileError) as info:
        load_profile(path, ENV)
    [problem] = info.value.problems
    allowed = problem.split("allowed here: ", 1)[1].split(", ")
    assert problem.startswith(f"{path}: {field}: unknown placeholder 'zzz'")
    assert sorted(allowed) == sorted(names)


def test_a_variable_is_named_by_its_own_name_never_under_vars(tmp_path: Path) -> None:
    path, field = profile_with(tmp_path, "status", "/t/{vars/project}")
    with pytest.raises(ProfileError) as info:
        load_profile(path, ENV)
    assert "unknown placeholder 'vars'" in info.value.problems[0]


def test_the_table_covers_every_place_the_checks_know() -> None:
    assert {place for place, _ in rows()} == set(PLACES)
