"""The published profile schema (docs/profile.schema.json) and the field reference generated
from it (docs/profiles.md) are what the models say, and the schema agrees with the loader:
it accepts every bundled profile and the docs' walk-through, and flags what the loader
refuses field by field."""

from __future__ import annotations

import copy
import functools
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from app.cli import main
from app.providers.authoring import schema_doc
from app.providers.authoring.schema import document, text
from app.providers.language.loader import BUILTIN_DIR

DOCS = Path(__file__).resolve().parents[2] / "docs"
SCHEMA_FILE = DOCS / "profile.schema.json"
PROFILES_MD = DOCS / "profiles.md"
BUNDLED = sorted(BUILTIN_DIR.glob("*.yaml"))


@functools.cache
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(document())


def walkthrough() -> dict[str, Any]:
    """The ten-minute example's YAML blocks, in order: one profile."""
    doc = PROFILES_MD.read_text(encoding="utf-8")
    walk = doc[doc.index("## Add your provider in ten minutes") : doc.index("**6. Check it**")]
    data = yaml.safe_load("".join(re.findall(r"```yaml\n(.*?)```", walk, flags=re.S)))
    assert isinstance(data, dict)
    return data


def test_the_published_schema_is_what_the_models_give() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == text(), (
        "docs/profile.schema.json is out of date: run `make schema` "
        "(or `jobgate profiles schema > docs/profile.schema.json`)"
    )


def test_the_field_reference_in_the_docs_is_generated_from_the_schema() -> None:
    doc = PROFILES_MD.read_text(encoding="utf-8")
    assert doc.count(schema_doc.BEGIN) == 1 and doc.count(schema_doc.END) == 1
    assert schema_doc.replace(doc, schema_doc.markdown()) == doc, (
        "the field reference in docs/profiles.md differs from the models' docstrings: run "
        f"`{schema_doc.REGENERATE}` (python -m app.providers.authoring.schema_doc docs/profiles.md)"
    )


def test_it_is_a_valid_json_schema_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(document())


def test_the_cli_prints_the_schema_and_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "schema"]) == 0
    printed = capsys.readouterr().out
    assert printed == text()
    parsed = json.loads(printed)
    assert parsed["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert parsed["$id"] and parsed["title"] and parsed["description"]
    assert list(parsed) == sorted(parsed)  # stable: sorted keys
    assert main(["profiles", "schema", "--markdown"]) == 0
    assert capsys.readouterr().out == schema_doc.markdown()


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_every_bundled_profile_is_valid_under_the_schema(path: Path) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator().iter_errors(
        yaml.safe_load(path.read_text(encoding="utf-8")))]  # fmt: skip
    assert errors == []


def test_the_walkthrough_profile_is_valid_under_the_schema() -> None:
    assert list(validator().iter_errors(walkthrough())) == []


def _set(data: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    *path, last = dotted.split(".")
    node = data
    for key in path:
        node = node.setdefault(key, {})
    node[last] = value
    return data


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("counts.succeeded", "/request_counts/*/completed"),
        ("counts.total", "/a * /b"),
        ("pointers.state", "/jobs/*/status"),
        ("pointers.error", "/bad~2escape"),
        ("states.done", "finished"),
        ("polling.factor", 0.5),
        ("name", "Not A Name"),
        ("pointers.unknown_field", "/x"),
        ("webhooks.scheme", "signed"),
    ],
)
def test_the_schema_flags_what_the_loader_refuses_field_by_field(field: str, value: Any) -> None:
    assert list(validator().iter_errors(walkthrough())) == []
    assert list(validator().iter_errors(_set(walkthrough(), field, value))) != []


def test_retry_hint_alone_may_read_any_element() -> None:
    hint = {"pointer": "/error/details/*/retryDelay", "format": "duration"}
    assert list(validator().iter_errors({**walkthrough(), "retry_hint": hint})) == []


def _properties() -> list[tuple[str, str, dict[str, Any]]]:
    schema = document()
    parts = [("Profile", schema), *schema["$defs"].items()]
    found = []
    for name, part in parts:
        obj = part if "properties" in part else part.get("anyOf", [{}])[0]
        found += [(name, field, prop) for field, prop in obj.get("properties", {}).items()]
    return found


def test_every_field_of_every_part_says_what_it_means() -> None:
    missing = [f"{part}.{field}" for part, field, prop in _properties()
               if not prop.get("description")]  # fmt: skip
    assert missing == []
    undescribed = [name for name, part in document()["$defs"].items()
                   if "enum" not in part and not part.get("description")]  # fmt: skip
    assert undescribed == []


def test_every_example_is_valid_for_its_field_and_is_shown_as_yaml_that_reads_back() -> None:
    defs = document()["$defs"]
    checked = 0
    for part, field, prop in _properties():
        for example in prop.get("examples", []):
            single = jsonschema.Draft202012Validator({**prop, "$defs": defs})
            assert list(single.iter_errors(example)) == [], f"{part}.{field}: {example!r}"
            assert yaml.safe_load(schema_doc.flow(example)) == example, f"{part}.{field}"
            checked += 1
    assert checked > 50
