"""A `*` pointer segment is "any element": allowed only where a profile reads any element
(`retry_hint.pointer`), refused at load everywhere a single value is read or written,
since it would silently read nothing (a count of 0, an absent state)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.cli import main
from app.providers.answers import extract
from app.providers.expressions.pointers import WILDCARD_REFUSED
from app.providers.language import counts
from app.providers.language.loader import ProfileError, load_profile

BASE: dict[str, Any] = {
    "version": 2,
    "name": "acme",
    "base_url": "https://api.acme.test",
    "kinds": {"report": {"create": {"path": "/jobs", "body": {"input": "$input"}}}},
    "status": {"path": "/jobs/{job_id}"},
    "result": {"path": "/jobs/{job_id}/result"},
    "pointers": {"job_id": "/id", "state": "/status"},
    "states": {"done": "succeeded"},
}


def write(tmp_path: Path, changes: dict[str, Any]) -> Path:
    data = copy.deepcopy(BASE)
    data.update(changes)
    path = tmp_path / "acme.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


CREATE = {"path": "/jobs"}
CASES = [
    ({"counts": {"succeeded": "/request_counts/*/completed"}}, "counts.succeeded"),
    ({"counts": {"total": "/a - /b/*"}}, "counts.total"),
    ({"pointers": {"job_id": "/id", "state": "/jobs/*/status"}}, "pointers.state"),
    ({"pointers": {"job_id": "/id", "state": "/s", "fields": {"f": "/files/*"}}},
     "pointers.fields.f"),
    ({"pointers": {"job_id": "/id", "state": "/s", "result": {"data": "/*"}}},
     "pointers.result.data"),
    ({"state_rules": [{"when": {"pointer": "/x/*", "equals": 1}, "then": "failed"}]},
     "state_rules.0.when.0.pointer"),
    ({"result": {"documents": [{"path": "/r", "format": "jsonl", "items": {"id": "/*/id"}}]}},
     "result.documents.0.items.id"),
    ({"kinds": {"r": {"create": {**CREATE, "job_id": {"pointer": "/jobs/*/id"}}}}},
     "kinds.r.create.job_id.pointer"),
    ({"kinds": {"r": {"create": {**CREATE, "body": {"first": "$input/requests/*"}}}}},
     "kinds.r.create.body"),
    ({"kinds": {"r": {"create": {"path": "/m/{input/*}/jobs"}}}}, "kinds.r.create.path"),
    ({"client_reference": {"location": "body", "pointer": "/requests/*/custom_id"}},
     "client_reference.pointer"),
    ({"webhooks": {"scheme": "hmac", "secret": {"env": "S"}, "signature_header": "X-Sig",
                   "job_id": "/data/*/id"}}, "webhooks.job_id"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "field"), CASES, ids=[c[1] for c in CASES])
def test_a_wildcard_where_one_value_is_read_is_refused_naming_the_field(
    tmp_path: Path, changes: dict[str, Any], field: str
) -> None:
    path = write(tmp_path, changes)
    with pytest.raises(ProfileError) as info:
        load_profile(path, {})
    problems = info.value.problems
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{path}: {field}: "), problems
    assert problems[0].endswith(WILDCARD_REFUSED), problems


def test_check_prints_one_line_per_wildcard_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, {"counts": {"succeeded": "/request_counts/*/completed",
                                       "failed": "/request_counts/*/failed"}})  # fmt: skip
    assert main(["profiles", "check", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "invalid profile:",
        f"  {path}: counts.succeeded: '/request_counts/*/completed': {WILDCARD_REFUSED}",
        f"  {path}: counts.failed: '/request_counts/*/failed': {WILDCARD_REFUSED}",
    ]


def test_retry_hint_reads_any_element_and_keeps_its_wildcard(tmp_path: Path) -> None:
    hint = {"pointer": "/error/details/*/retryDelay", "format": "duration"}
    profile = load_profile(write(tmp_path, {"retry_hint": hint}), {})
    body = {"error": {"details": [{"@type": "x"}, {"retryDelay": "7s"}]}}
    assert extract.retry_hint(profile, body) == 7.0


def test_a_star_inside_a_segment_is_a_member_name_not_a_wildcard(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, {"counts": {"succeeded": "/counts/ok*"}}), {})
    assert profile.counts is not None
    found = counts.read(profile.counts, {"counts": {"ok*": 3}})
    assert found is not None and found.succeeded == 3
