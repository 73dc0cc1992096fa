"""Request templates: whole-value and in-string placeholders, absent values, escapes."""

from __future__ import annotations

from typing import Any

import pytest

from app.providers.calls.http_util import quote_job_id
from app.providers.expressions import templates
from app.providers.expressions.pointers import MISSING
from app.providers.expressions.templates import (
    TemplateError,
    check,
    references,
    render,
    render_text,
)

VALUES: dict[str, Any] = {
    "input": {"requests": [{"custom_id": "a"}, {"custom_id": "b"}], "model": "m-1", "n": 3},
    "client_reference": "op_01ABC",
    "output_file_id": "file-9",
    "reason": None,
}


def test_whole_value_placeholders_keep_their_json_type() -> None:
    template = {"requests": "$input/requests", "n": "$input/n", "all": "$input"}
    assert render(template, VALUES) == {
        "requests": VALUES["input"]["requests"],
        "n": 3,
        "all": VALUES["input"],
    }
    rendered = render({"x": "$input/requests"}, VALUES)
    rendered["x"].append("changed")  # a copy: the input itself is untouched
    assert len(VALUES["input"]["requests"]) == 2


def test_placeholders_inside_strings_and_arrays() -> None:
    template = {
        "path": "/v1/files/{output_file_id}/content",
        "name": "jobgate-{client_reference}.jsonl",
        "list": ["{input/model}", "$client_reference", {"deep": "{input/requests/1/custom_id}"}],
        "label": "{client_reference|lower}",
    }
    assert render(template, VALUES) == {
        "path": "/v1/files/file-9/content",
        "name": "jobgate-op_01ABC.jsonl",
        "list": ["m-1", "op_01ABC", {"deep": "b"}],
        "label": "op_01abc",
    }


def test_absent_values_remove_what_holds_them() -> None:
    template = {"reason": "$reason", "hook": "{missing}?ref={client_reference}", "keep": 1,
                "list": ["$reason", "x"], "ptr": "$input/nothing"}  # fmt: skip
    assert render(template, {**VALUES, "missing": None}) == {"keep": 1, "list": ["x"]}
    assert render("$reason", VALUES) is MISSING
    assert render_text("/a/{missing}", VALUES) is None


def test_escapes_and_literals() -> None:
    assert render({"a": "$$5.00", "b": "{{literal}}", "c": 7, "d": None}, VALUES) == {
        "a": "$5.00",
        "b": "{literal}",
        "c": 7,
        "d": None,
    }
    assert references({"a": "$$x", "b": "{{y}}"}) == set()


def test_values_are_never_rendered_again() -> None:
    assert render("$input", {"input": {"x": "{client_reference}"}}) == {"x": "{client_reference}"}


def test_path_values_are_quoted_and_cannot_walk_the_path() -> None:
    assert render_text("/v3/{job_id}:cancel", {"job_id": "projects/1/operations/x"},
                       quote=quote_job_id) == "/v3/projects/1/operations/x:cancel"  # fmt: skip
    walked = render_text("/jobs/{job_id}", {"job_id": "../admin"}, quote=quote_job_id)
    assert walked == "/jobs/%2E%2E%2Fadmin"


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("$ 5", "not a placeholder"),
        ("{a b}", "not a placeholder name"),
        ("{open", "unbalanced"),
        ("close}", "unbalanced"),
        ("{x|upper}", "unknown filter"),
        ("$x/a~2", "'~'"),
    ],
)
def test_bad_templates_are_refused(template: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message):
        references(template)


def test_check_names_the_unknown_placeholder_and_what_is_allowed() -> None:
    check({"a": "$input/x", "b": "{job_id}"}, {"input", "job_id"})
    with pytest.raises(TemplateError, match="unknown placeholder 'inptu'; allowed here: input"):
        check({"a": "$inptu"}, {"input"})


def test_objects_cannot_go_inside_text() -> None:
    with pytest.raises(TemplateError, match="cannot go inside text"):
        render("x-{input}", VALUES)
    assert templates.render_text("{input/n}-{input/n}", VALUES) == "3-3"
