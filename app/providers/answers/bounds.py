"""Provider text cut to a bound where it enters, so what is stored and served stays small.

A provider may answer a 10 MB error message or a million-member error object; jobgate
keeps and shows only a bounded part of it, and says so: a cut string ends with
``… [cut: N bytes]`` (N is how many UTF-8 bytes were dropped), a cut container holds
the member ``"…": "[cut: N more]"`` (an object) or ends with the string
``"… [cut: N more]"`` (an array). The limits are documented in docs/agent-api.md
("Provider text is bounded"). Pure.
"""

from __future__ import annotations

from typing import Any

MESSAGE_BYTES = 4096  # an error message, and any one string of an item's error
WORD_BYTES = 256  # an error code, a remote state, a provider timestamp, an object key
VALUE_BYTES = 16 * 1024  # one error object or one failed item, all of its text together
DEPTH = 8  # containers inside one error object or failed item
NUMBER_LIMIT = 2**53 - 1  # a count or progress beyond +/- this is unreadable (I-JSON, RFC 7493)
MARK = "\u2026"  # the horizontal ellipsis every marker starts with
_MARKER_ROOM = 32  # bytes kept free for "… [cut: N bytes]" (N up to 19 digits)


def cut(text: str, limit: int) -> str:
    """``text`` when it fits in ``limit`` UTF-8 bytes; else its head (whole characters)
    and the marker saying how many bytes were dropped, together within ``limit`` (so a
    text cut once is never cut again)."""
    if len(text) * 4 <= limit:  # no character is longer than 4 bytes
        return text
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text
    room = max(limit - _MARKER_ROOM, 0)
    head = raw[:room].decode("utf-8", "ignore")  # drops a character split at the bound
    dropped = len(raw) - len(head.encode("utf-8", "surrogatepass"))
    return f"{head}{MARK} [cut: {dropped} bytes]"


def number_problem(name: str, value: int | None) -> str | None:
    """Why a count the provider gave cannot be kept (beyond ``NUMBER_LIMIT``), or None."""
    if value is None or -NUMBER_LIMIT <= value <= NUMBER_LIMIT:
        return None
    digits = len(str(abs(value)))
    return f"{name} is a number of {digits} digits, beyond what jobgate keeps (2^53 - 1)"


def word(value: str | None) -> str | None:
    """A short provider word (state, code, timestamp), cut to ``WORD_BYTES``."""
    return None if value is None else cut(value, WORD_BYTES)


def bounded(value: Any, *, text: int = MESSAGE_BYTES, budget: int = VALUE_BYTES) -> Any:
    """A JSON value with every string cut to ``text`` bytes, at most ``DEPTH`` containers
    deep, and all its text together within about ``budget`` bytes; what is left out is
    marked. The same object when nothing had to be cut."""
    walk = _Walk(text, budget)
    out = walk.value(value, 0)
    return value if not walk.changed else out


class _Walk:
    def __init__(self, text: int, budget: int) -> None:
        self.text, self.left, self.changed = text, budget, False

    def value(self, value: Any, depth: int) -> Any:
        if isinstance(value, str):
            return self.string(value, self.text)
        if isinstance(value, dict | list):
            if depth >= DEPTH:
                self.changed = True
                return f"{MARK} [cut: nested deeper than {DEPTH}]"
            return self.mapping(value, depth) if isinstance(value, dict) else self.seq(value, depth)
        self.left -= 8  # a number, a bool, a null: small, but never free
        return value

    def string(self, value: str, limit: int) -> str:
        out = cut(value, max(min(limit, self.left), 0))
        if out is not value:
            self.changed = True
        self.left -= min(len(value), limit) + 2
        return out

    def mapping(self, value: dict[Any, Any], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for n, (key, member) in enumerate(value.items()):
            if self.left <= 0:
                self.changed = True
                out[MARK] = f"[cut: {len(value) - n} more]"
                break
            out[self.string(str(key), WORD_BYTES)] = self.value(member, depth + 1)
        return out

    def seq(self, value: list[Any], depth: int) -> list[Any]:
        out: list[Any] = []
        for n, member in enumerate(value):
            if self.left <= 0:
                self.changed = True
                out.append(f"{MARK} [cut: {len(value) - n} more]")
                break
            out.append(self.value(member, depth + 1))
        return out


def error(value: dict[str, Any]) -> dict[str, Any]:
    """A provider's error object, bounded: ``code`` to ``WORD_BYTES``, ``message`` and
    every other string to ``MESSAGE_BYTES``, all of it to ``VALUE_BYTES``."""
    code = value.get("code")
    if isinstance(code, str) and len(code) > WORD_BYTES // 4:
        value = {**value, "code": cut(code, WORD_BYTES)}
    out = bounded(value)
    return out if isinstance(out, dict) else value
