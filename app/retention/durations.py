"""Durations as an operator types them: `30d`, `12h`, `90m`, `45s`, `2w`, `0s`."""

from __future__ import annotations

import re

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_FORM = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")


def parse_duration(text: str) -> float:
    """Seconds in `text` (a bare number is seconds); ValueError naming the forms."""
    match = _FORM.match(text.lower())
    if match is None:
        raise ValueError(
            f"{text!r} is not a duration: write a number and a unit, e.g. 30d, 12h, 90m, 0s"
        )
    return float(match.group(1)) * _UNITS[match.group(2) or "s"]
