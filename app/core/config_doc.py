"""docs/configuration.md, generated from `Settings`: every `JOBGATE_*` variable, its type,
default and description (each field's docstring). `make config-doc` writes it;
tests/unit/test_configuration_doc.py fails when the file and the code differ.

    python -m app.core.config_doc docs/configuration.md
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from app.core.config import Settings

HEADER = """# Configuration

jobgate reads its settings from `JOBGATE_*` environment variables once, at start; a value
it cannot use is refused with one line naming the variable (never its value). This page
is generated from `app/core/config.py` (`make config-doc`); a test fails when the two
differ.

| variable | type | default | what it does |
| --- | --- | --- | --- |
"""


def env_names(name: str, info: FieldInfo) -> list[str]:
    """The variables that set a field: its aliases if it has any, else JOBGATE_<NAME>."""
    alias = info.validation_alias
    choices = getattr(alias, "choices", None)
    if choices:
        return [str(c) for c in choices]
    return [f"JOBGATE_{name.upper()}"]


def type_of(info: FieldInfo) -> str:
    text = str(info.annotation).replace("typing.", "").replace("pathlib.", "")
    text = text.replace("<class '", "").replace("'>", "")
    return text.replace("Literal[", "one of [")


def default_of(info: FieldInfo) -> str:
    value: Any = info.default
    if value is PydanticUndefined or value is None:
        return "unset"
    if value == "":
        return "unset"
    return f"`{value}`"


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render() -> str:
    rows = []
    for name, info in Settings.model_fields.items():
        if not info.description:
            raise ValueError(f"Settings.{name} has no docstring")
        names = " or ".join(f"`{n}`" for n in env_names(name, info))
        rows.append(
            f"| {names} | {cell(type_of(info))} | {cell(default_of(info))} "
            f"| {cell(info.description)} |"
        )
    return HEADER + "\n".join(rows) + "\n"


def main(argv: list[str]) -> int:
    Path(argv[0]).write_text(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
