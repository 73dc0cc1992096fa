"""A tiny RFC 6901 JSON Pointer helper used by provider profiles.

Profiles say where a provider keeps the job id, state, progress and result with
JSON pointers (``/progress/completed``). Only reading and a simple "set, creating
objects on the way" are needed, so this stays small instead of pulling a library.
"""

from __future__ import annotations

from typing import Any, Final


class _Missing:
    """Sentinel type: the pointer does not resolve (distinct from a JSON ``null``)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()


class PointerError(ValueError):
    """A string is not a valid RFC 6901 JSON pointer."""


WILDCARD = "*"
WILDCARD_REFUSED = "a wildcard (*) matches many values; this field reads one"


def parse(pointer: str) -> tuple[str, ...]:
    """Split a pointer into unescaped reference tokens (``""`` is the whole document).

    ``~1`` becomes ``/`` and ``~0`` becomes ``~``, in that order as RFC 6901 requires,
    so ``~01`` stays the literal ``~1``.
    """
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise PointerError("a JSON pointer must be empty or start with '/'")
    tokens = pointer[1:].split("/")
    for token in tokens:
        # A "~" must be followed by 0 or 1; anything else is malformed.
        rest = token.replace("~0", "").replace("~1", "")
        if "~" in rest:
            raise PointerError("'~' in a JSON pointer must be followed by '0' or '1'")
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in tokens)


def refuse_wildcard(pointer: str) -> None:
    """Raise `PointerError` when a segment of ``pointer`` is exactly ``*``.

    Only ``retry_hint.pointer`` reads "any element" (app.providers.answers.extract); everywhere
    else a pointer names one value, and a ``*`` there would read a member named ``*``,
    which is nothing: a count of 0, a state never seen. Refused when the profile loads.
    """
    if WILDCARD in parse(pointer):
        raise PointerError(WILDCARD_REFUSED)


def escape(token: str) -> str:
    """Escape one reference token (``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def _array_index(token: str, length: int) -> int | None:
    # RFC 6901: decimal digits without leading zeros; "-" (past the end) never resolves.
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        return None
    index = int(token)
    return index if index < length else None


def get(document: Any, pointer: str | None) -> Any:
    """Resolve ``pointer`` in ``document``; ``MISSING`` when it does not resolve.

    A ``None`` pointer (the profile does not declare the field) is ``MISSING`` too.
    """
    if pointer is None:
        return MISSING
    current = document
    for token in parse(pointer):
        if isinstance(current, dict):
            if token not in current:
                return MISSING
            current = current[token]
        elif isinstance(current, list):
            index = _array_index(token, len(current))
            if index is None:
                return MISSING
            current = current[index]
        else:
            return MISSING
    return current


def set_value(document: dict[str, Any], pointer: str, value: Any) -> None:
    """Set ``value`` at ``pointer`` inside ``document``, creating objects on the way.

    Array elements that exist may be passed through or replaced by index
    (``/requests/0/custom_id``); only object members are created. The whole-document
    pointer cannot be set, and a scalar (or a missing array element) in the way raises
    ``PointerError`` (a profile/template mismatch).
    """
    tokens = parse(pointer)
    if not tokens:
        raise PointerError("cannot set the whole document")
    current: Any = document
    for token in tokens[:-1]:
        if isinstance(current, list):
            index = _array_index(token, len(current))
            if index is None:
                raise PointerError("a JSON pointer names an array element that does not exist")
            current = current[index]
        elif isinstance(current, dict):
            current = current.setdefault(token, {})
        else:
            raise PointerError("a JSON pointer passes through a non-object")
    last = tokens[-1]
    if isinstance(current, list):
        index = _array_index(last, len(current))
        if index is None:
            raise PointerError("a JSON pointer names an array element that does not exist")
        current[index] = value
    elif isinstance(current, dict):
        current[last] = value
    else:
        raise PointerError("a JSON pointer passes through a non-object")
