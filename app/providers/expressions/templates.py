"""Request templates: placeholders anywhere in a JSON value, a path, a header or a URL.

Two forms, both naming a value the gateway knows when it builds a request (the
operation's input, its client reference and token, the remote job id, a profile
variable, a field read from the provider's last answer):

- ``"$name"`` (the whole string): the value itself, keeping its JSON type, so
  ``"$input"`` is an object and ``"$input/requests"`` an array. A name may be followed
  by a JSON pointer into its value (``$input/requests/0/custom_id``).
- ``"text {name} text"`` (inside a string): the value's text, e.g.
  ``"/v1/files/{output_file_id}/content"`` or ``"jobgate-{client_reference}.jsonl"``;
  ``{name|lower}`` lower-cases it (for fields that refuse capitals, like Google labels).

A value that is absent (``None`` or no such member) removes what it is in: the object
member or the array element holding it, whole (``reason: $reason`` with no reason is
left out; so is ``webhook: "{webhook_url}?ref={client_reference}"`` without a webhook
URL). ``$$`` starts a literal ``$``; ``{{`` and ``}}`` are literal braces. Unknown
names are refused when the profile loads, never at call time.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

from app.providers.expressions import pointers
from app.providers.expressions.pointers import MISSING

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_WHOLE = re.compile(rf"^\$({_NAME})((?:/[^/|]*)*)(\|[a-z]+)?$")
_PART = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_REF = re.compile(rf"^({_NAME})((?:/[^/|]*)*)(?:\|([a-z]+))?$")
FILTERS = {"lower": str.lower}  # {client_reference|lower}: for fields that refuse capitals


class TemplateError(ValueError):
    """A template that cannot be read, or that names a value the context does not have."""


def _parse_ref(text: str, where: str) -> tuple[str, str, str | None]:
    match = _REF.match(text)
    if match is None:
        raise TemplateError(f"{where} is not a placeholder name (letters, digits, _)")
    name, pointer, flt = match.group(1), match.group(2), match.group(3)
    try:
        pointers.refuse_wildcard(pointer)  # a placeholder stands for one value
    except pointers.PointerError as exc:
        raise TemplateError(f"{where}: {exc}") from None
    if flt is not None and flt not in FILTERS:
        raise TemplateError(f"{where}: unknown filter {flt!r}; filters: {', '.join(FILTERS)}")
    return name, pointer, flt


def _string_refs(text: str) -> Iterator[tuple[str, str, str | None]]:
    if text.startswith("$$"):
        return
    if text.startswith("$"):
        match = _WHOLE.match(text)
        if match is None:
            raise TemplateError(
                f"{text[:40]!r} starts with '$' but is not a placeholder; write '$$' for a "
                "literal '$'"
            )
        yield _parse_ref(text[1:], f"'{text[:40]}'")
        return
    for part in _PART.finditer(text):
        token = part.group(0)
        if token in ("{{", "}}"):
            continue
        if token in ("{", "}"):
            raise TemplateError(f"unbalanced '{token}' in {text[:60]!r}; write '{token * 2}'")
        yield _parse_ref(part.group(1), f"{{{part.group(1)}}}")


def references(template: Any) -> set[str]:
    """The names a template uses (pointers stripped); raises `TemplateError` on bad syntax."""
    found: set[str] = set()
    if isinstance(template, dict):
        for value in template.values():
            found |= references(value)
    elif isinstance(template, list):
        for value in template:
            found |= references(value)
    elif isinstance(template, str):
        found |= {ref[0] for ref in _string_refs(template)}
    return found


def input_fields(template: Any) -> set[str] | None:
    """The top-level members of ``input`` a template sends (``$input/requests`` sends
    ``requests``); None when it sends ``$input`` whole, so every member reaches the provider."""
    found: set[str] = set()
    for name, pointer, _ in _all_refs(template):
        if name != "input":
            continue
        if not pointer:
            return None
        found.add(pointers.parse(pointer)[0])
    return found


def _all_refs(template: Any) -> Iterator[tuple[str, str, str | None]]:
    if isinstance(template, dict):
        for value in template.values():
            yield from _all_refs(value)
    elif isinstance(template, list):
        for value in template:
            yield from _all_refs(value)
    elif isinstance(template, str):
        yield from _string_refs(template)


def check(template: Any, allowed: Collection[str]) -> None:
    """Refuse a template that names anything outside ``allowed``."""
    unknown = sorted(references(template) - set(allowed))
    if unknown:
        raise TemplateError(
            f"unknown placeholder {unknown[0]!r}; allowed here: {', '.join(sorted(allowed))}"
        )


def _value(values: Mapping[str, Any], ref: tuple[str, str, str | None]) -> Any:
    name, pointer, flt = ref
    value = values.get(name, MISSING)
    if value is None or value is MISSING:
        return MISSING
    found = pointers.get(value, pointer) if pointer else value
    if found is None or found is MISSING:
        return MISSING
    if flt is not None:
        if not isinstance(found, str):
            raise TemplateError(f"{{{name}{pointer}|{flt}}} is not text")
        found = FILTERS[flt](found)
    return found


def _text(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise TemplateError(f"{where} is an object or array and cannot go inside text")


def render_text(
    text: str, values: Mapping[str, Any], quote: Callable[[str], str] | None = None
) -> str | None:
    """One string template rendered to text; ``None`` when a value it names is absent.

    ``quote`` encodes each substituted value (path segments); the literal parts of the
    template are kept as written.
    """
    found = render(text, values, quote=quote)
    if found is MISSING:
        return None
    if not isinstance(found, str):
        return _text(found, repr(text[:40]))
    return found


def render(
    template: Any, values: Mapping[str, Any], *, quote: Callable[[str], str] | None = None
) -> Any:
    """Fill a template with ``values``; ``MISSING`` when the whole template is absent.

    Objects and arrays drop the members and elements that are absent. Substituted
    values are deep copies, never rendered again (an input holding "{x}" stays as is).
    """
    if isinstance(template, dict):
        out: dict[str, Any] = {}
        for key, item in template.items():
            found = render(item, values, quote=quote)
            if found is not MISSING:
                out[key] = found
        return out
    if isinstance(template, list):
        rendered = (render(item, values, quote=quote) for item in template)
        return [item for item in rendered if item is not MISSING]
    if not isinstance(template, str):
        return template
    if template.startswith("$$"):
        return template[1:]
    if template.startswith("$"):
        found = _value(values, _parse_ref(template[1:], repr(template[:40])))
        return found if found is MISSING else copy.deepcopy(found)
    pieces: list[str] = []
    last = 0
    for part in _PART.finditer(template):
        pieces.append(template[last : part.start()])
        last = part.end()
        token = part.group(0)
        if token in ("{{", "}}"):
            pieces.append(token[0])
            continue
        if part.group(1) is None:
            raise TemplateError(f"unbalanced '{token}' in {template[:60]!r}")
        found = _value(values, _parse_ref(part.group(1), f"{{{part.group(1)}}}"))
        if found is MISSING:
            return MISSING
        piece = _text(found, f"{{{part.group(1)}}}")
        pieces.append(quote(piece) if quote else piece)
    pieces.append(template[last:])
    return "".join(pieces)
