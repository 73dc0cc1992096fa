"""The intake validator: every value the gateway stores or forwards passes through here.

Pure, no I/O. One set of rules for request bodies, query parameters, form fields
and webhook bodies, checked before anything is written:

- text encodes as UTF-8 (no lone surrogates) and holds no NUL, in keys too
  (PostgreSQL refuses NUL in text, and no JSON encoder can write a lone surrogate);
- numbers are I-JSON (RFC 7493): integers within +/-(2**53 - 1), floats finite;
- nesting depth and the number of values are bounded.

A failure is `InvalidValue` (422 `invalid_value`) with the RFC 6901 pointer of the
offending value, or `MalformedJson` (400 `malformed_json`) when the bytes are not
JSON the gateway will read (`NaN`, `Infinity`, nesting too deep to parse).
`app.core.text.degrade` is the reader's side: text written by older versions that
cannot be encoded is shown with U+FFFD instead of breaking the response.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypeAliasType

from app.core.http.errors import ApiError
from app.core.text import degrade
from app.core.text import problem as text_problem

MAX_DEPTH = 32  # nesting levels of objects and arrays, counted from the document root
MAX_VALUES = 10_000  # values (scalars, objects, arrays) in one document
MAX_SAFE_INTEGER = 2**53 - 1  # I-JSON: integers beyond this lose precision in most parsers
_MAX_INT_DIGITS = 16  # longer digit strings are out of range without converting them

REASONS = {
    "nul": "text holds a NUL character",
    "unpaired_surrogate": "text holds a lone UTF-16 surrogate (not encodable as UTF-8)",
    "number_out_of_range": "number outside the I-JSON range (integers within +/-(2^53-1), "
    "finite floats)",
    "too_deep": f"nested deeper than {MAX_DEPTH} levels",
    "too_many_values": f"more than {MAX_VALUES} values",
}


class InvalidValue(ApiError):
    """A value the gateway will not store or forward: 422 with where and why."""

    def __init__(
        self, reason: str, *, pointer: str | None = None, parameter: str | None = None
    ) -> None:
        details: dict[str, Any] = {"reason": reason}
        where = ""
        if pointer is not None:
            details["pointer"] = pointer
            where = f" at {pointer}" if pointer else " at the document root"
        if parameter is not None:
            details["parameter"] = parameter
            where = f" in parameter {parameter!r}"
        super().__init__(
            422, "invalid_value", f"Invalid value{where}: {REASONS[reason]}.", degrade(details)
        )


class MalformedJson(ApiError):
    """Bytes that are not JSON the gateway reads: 400 `malformed_json`."""

    def __init__(self, why: str) -> None:
        super().__init__(
            400, "malformed_json", f"The request body is not valid JSON: {why}.", {"reason": why}
        )


class _OutOfRange:
    """A number literal kept as text by `loads` so `check` can report where it is."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal


class _NonStandard(ValueError):
    pass


def _parse_int(literal: str) -> Any:
    if len(literal.lstrip("-")) > _MAX_INT_DIGITS:
        return _OutOfRange(literal)  # never convert: 5,000 digits would be slow or refused
    return int(literal)


def _parse_float(literal: str) -> Any:
    value = float(literal)
    return value if math.isfinite(value) else _OutOfRange(literal)


def _parse_constant(name: str) -> Any:
    raise _NonStandard(name)


def loads(raw: bytes | str) -> Any:
    """Parse JSON strictly: `NaN`/`Infinity` and unparseable nesting are `MalformedJson`.

    Out-of-range numbers parse to markers that `check` reports with their pointer.
    """
    try:
        return json.loads(
            raw,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
        )
    except _NonStandard as exc:
        raise MalformedJson(f"{exc} is not a JSON number") from None
    except RecursionError:
        raise MalformedJson(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise MalformedJson(_first_line(exc)) from None


def _first_line(exc: Exception) -> str:
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return str(degrade(first))[:200]


def _number_problem(value: Any) -> str | None:
    if isinstance(value, _OutOfRange):
        return "number_out_of_range"
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
        return "number_out_of_range"
    if isinstance(value, float) and not math.isfinite(value):
        return "number_out_of_range"
    return None


def escape(token: str) -> str:
    """One RFC 6901 reference token."""
    return token.replace("~", "~0").replace("/", "~1")


def check(value: Any, pointer: str = "") -> None:
    """Raise `InvalidValue` at the first value (in document order) that breaks a rule."""
    seen = 0
    stack: list[tuple[Any, str, int]] = [(value, pointer, 0)]
    while stack:
        item, where, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise InvalidValue("too_many_values", pointer=degrade(where))
        if isinstance(item, str):
            problem = text_problem(item)
        elif isinstance(item, dict | list):
            problem = "too_deep" if depth >= MAX_DEPTH else None
        else:
            problem = _number_problem(item)
        if problem is not None:
            raise InvalidValue(problem, pointer=degrade(where))
        if isinstance(item, dict):
            children = []
            for key, child in item.items():
                path = f"{where}/{escape(str(key))}"
                key_problem = text_problem(str(key))
                if key_problem is not None:
                    raise InvalidValue(key_problem, pointer=degrade(path))
                children.append((child, path, depth + 1))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend(
                (child, f"{where}/{i}", depth + 1) for i, child in reversed(list(enumerate(item)))
            )


def check_text(text: str | None, *, parameter: str) -> None:
    """One stored text parameter (a query filter, a header): `InvalidValue` naming it."""
    if text is not None and (problem := text_problem(text)) is not None:
        raise InvalidValue(problem, parameter=parameter)


# The same rules as types for request models, so the OpenAPI document states them too.
# (Bodies are checked by `check` first; these never see a value that breaks a rule.)
NO_NUL = r"^[^\x00]*$"
# An alias, so dict keys are documented as `propertyNames` (a pattern on keys would
# become `patternProperties`, which lets any other key through).
Text = TypeAliasType("Text", Annotated[str, Field(pattern=NO_NUL)])
SafeInt = Annotated[int, Field(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]
JsonValue = TypeAliasType(
    "JsonValue",
    "Text | SafeInt | float | bool | None | list[JsonValue] | dict[Text, JsonValue]",
)
JsonObject = dict[Text, JsonValue]
