"""docs/profiles.md's field reference, rendered from the profile's JSON Schema.

One section per part of a profile, in the order a profile is read (a walk from the top
level through each field's type), each with the part's description and a table: field,
type, default, meaning, example. The models' docstrings are the one source
(app.providers.authoring.schema); `make schema` writes the section between `BEGIN` and `END`, and
a test fails when docs/profiles.md differs.

    python -m app.providers.authoring.schema_doc docs/profiles.md   # rewrite the section in place
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.providers.authoring.schema import document

BEGIN = (
    "<!-- BEGIN field reference: generated from the models in app/providers by "
    "`make schema`; edit their docstrings, not this -->"
)
END = "<!-- END field reference -->"
REGENERATE = "make schema"
ROOT = ""  # the top level's key among the sections
KEYS = {"kinds": "<kind>", "vars": "<var>", "multipart": "<part>"}  # map keys in paths
FORMATS = {
    "json-pointer": "Pointer",
    "jobgate-template": "Template",
    "jobgate-count-expression": "expression",
    "path": "file path",
}
SCALARS = ["string", "integer", "number", "boolean"]
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*")  # a YAML plain scalar, safely
_YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}

Schema = dict[str, Any]


def _obj(node: Schema) -> Schema:
    """A model's object schema (a model that accepts two forms: its first, the canonical)."""
    return node if "properties" in node else node["anyOf"][0]


def _ref(node: Schema) -> str | None:
    return node["$ref"].rsplit("/", 1)[1] if "$ref" in node else None


def _models(prop: Schema, defs: Schema, key: str) -> Iterator[tuple[str, str]]:
    """(model name, path suffix) of every object model a field holds, however nested."""
    name = _ref(prop)
    if name is not None and "enum" not in defs[name]:
        yield name, ""
    for branch in prop.get("anyOf", []):
        yield from _models(branch, defs, key)
    if isinstance(prop.get("items"), dict):
        yield from ((n, "[]" + rest) for n, rest in _models(prop["items"], defs, key))
    if isinstance(prop.get("additionalProperties"), dict):
        found = _models(prop["additionalProperties"], defs, key)
        yield from ((n, f".{key}{rest}") for n, rest in found)


def _walk(defs: Schema, node: Schema, path: str, found: dict[str, list[str]]) -> None:
    for name, prop in _obj(node)["properties"].items():
        held: dict[str, str] = {}
        for model, suffix in _models(prop, defs, KEYS.get(name, "<name>")):
            held.setdefault(model, suffix)  # a field that takes one or a list: its first form
        for model, suffix in held.items():
            where = f"{path}.{name}{suffix}" if path else f"{name}{suffix}"
            if model in found:
                found[model].append(where)
                continue
            found[model] = [where]
            _walk(defs, defs[model], where, found)


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.lower()).replace(" ", "-")


def _heading(paths: list[str]) -> str:
    return f"`{paths[0]}`" if paths[0] else "Top level"


def flow(value: Any) -> str:
    """A value in YAML flow style, as a profile would write it (it reads back as ``value``)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        plain = _PLAIN.fullmatch(value) and value.lower() not in _YAML_WORDS
        return value if plain else json.dumps(value, ensure_ascii=False)
    return str(value)


def _md(text: str) -> str:
    """Docstring text as Markdown: ``code`` (reST style) written `code`."""
    return re.sub(r"(?<!`)``(?!`)", "`", text)


def _cell(text: str) -> str:
    """Docstring text for a Markdown table cell: one line, no bare pipe."""
    return _md(" ".join(text.split())).replace("|", "\\|")


def _bounds(node: Schema) -> str:
    marks = [("exclusiveMinimum", ">"), ("minimum", "≥"), ("maximum", "≤")]
    return "".join(f" {sign} {flow(node[k])}" for k, sign in marks if k in node)


def _type(node: Schema, defs: Schema, anchors: dict[str, str]) -> str:
    name = _ref(node)
    if name is not None:
        target = defs[name]
        if "enum" in target:
            return " \\| ".join(f"`{v}`" for v in target["enum"])
        return f"[object](#{anchors[name]})"
    if "const" in node:
        return f"`{flow(node['const'])}`"
    if "enum" in node:
        return " \\| ".join(f"`{v}`" for v in node["enum"])
    branches = [b for b in node.get("anyOf", []) if b.get("type") != "null"]
    if branches:
        if [b.get("type") for b in branches] == SCALARS and all(len(b) == 1 for b in branches):
            return "scalar"
        return " or ".join(_type(b, defs, anchors) for b in branches)
    kind = node.get("type")
    if kind == "array":
        size = f" (≥ {node['minItems']})" if "minItems" in node else ""
        return f"list{size} of {_type(node['items'], defs, anchors)}"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        size = f" (≥ {node['minProperties']})" if "minProperties" in node else ""
        return f"map{size} of {_type(node['additionalProperties'], defs, anchors)}"
    if kind == "string":
        shape = f" (`{node['pattern']}`)" if "pattern" in node else ""
        return FORMATS.get(node.get("format", ""), f"string{shape}")
    if kind in ("number", "integer"):
        return f"{kind}{_bounds(node)}"
    return str(kind) if kind else "any JSON"


def _default(name: str, prop: Schema, required: list[str], defs: Schema) -> str:
    if name in required or "default" not in prop:
        return "required"
    value = prop["default"]
    if value is None:
        return "none"
    model = next((m for m, suffix in _models(prop, defs, "") if not suffix), None)
    if isinstance(value, dict) and model is not None:
        # A part's default: only what differs from that part's own defaults.
        own = _obj(defs[model])["properties"]
        value = {k: v for k, v in value.items() if own[k].get("default", ...) != v}
    return f"`{flow(value)}`"


def _section(node: Schema, paths: list[str], defs: Schema, anchors: dict[str, str]) -> list[str]:
    obj = _obj(node)
    lines = [f"### {_heading(paths)}", ""]
    about = node.get("description") or obj.get("description")
    if about:
        lines += [_md(about), ""]
    if len(paths) > 1:
        lines += ["Also at " + ", ".join(f"`{p}`" for p in paths[1:]) + ".", ""]
    lines += ["| field | type | default | meaning | example |", "| --- | --- | --- | --- | --- |"]
    required = obj.get("required", [])
    for field, prop in obj["properties"].items():
        example = " or ".join(f"`{flow(e)}`" for e in prop.get("examples", []))
        lines.append(
            f"| `{field}` | {_type(prop, defs, anchors)} | {_default(field, prop, required, defs)} "
            f"| {_cell(prop.get('description', ''))} | {example} |"
        )
    return [*lines, ""]


def markdown() -> str:
    """The field reference: one section per part, as docs/profiles.md holds it."""
    schema = document()
    defs = schema["$defs"]
    found: dict[str, list[str]] = {ROOT: [""]}  # model -> the paths it is at, in reading order
    _walk(defs, schema, "", found)
    anchors = {name: _slug(_heading(paths)) for name, paths in found.items()}
    lines: list[str] = []
    for name, paths in found.items():
        lines += _section(schema if name == ROOT else defs[name], paths, defs, anchors)
    return "\n".join(lines).rstrip() + "\n"


def replace(doc: str, reference: str) -> str:
    """``doc`` with the text between the markers replaced by ``reference``."""
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    return f"{doc[:start]}\n\n{reference}\n{doc[end:]}"


def main(argv: list[str]) -> int:
    """Rewrite the field reference in each file named (docs/profiles.md)."""
    for name in argv:
        path = Path(name)
        path.write_text(replace(path.read_text(encoding="utf-8"), markdown()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
