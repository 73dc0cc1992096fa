"""Item counts: how many items a remote job had, and how many succeeded, failed or never ran.

A profile gives each count as an expression over JSON pointers into a provider body
(``/request_counts/completed``), integers, ``+`` and ``-``, separated by spaces:
``/request_counts/total - /request_counts/completed - /request_counts/failed``. The
same expressions over count names (``total - succeeded``) are what state rules compare.

``not_processed`` is the count that matters most: items the provider never ran
(expired, cancelled). They are never "succeeded", whatever the job's state says.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, WithJsonSchema, model_validator

from app.providers.expressions import pointers
from app.providers.expressions.pointers import MISSING
from app.providers.language.spec_base import SpecModel

COUNT_NAMES = ("total", "succeeded", "failed", "not_processed")
_INT = re.compile(r"^\d+$")
_NAME = re.compile(r"^[a-z_]+$")

Term = tuple[int, str | int]  # (+1 or -1, a pointer, a count name or an integer)


class CountError(ValueError):
    """A count expression that cannot be read."""


def parse(text: str, *, names: bool = False) -> list[Term]:
    """Split ``a + b - 3`` into signed terms; pointers (or, with ``names``, count names)."""
    tokens = str(text).split()
    if not tokens or len(tokens) % 2 == 0:
        raise CountError("an expression is terms joined by ' + ' or ' - ' (with spaces)")
    terms: list[Term] = []
    sign = 1
    for i, token in enumerate(tokens):
        if i % 2:
            if token not in ("+", "-"):
                raise CountError(f"expected '+' or '-' between terms, got {token!r}")
            sign = 1 if token == "+" else -1
            continue
        if _INT.match(token):
            terms.append((sign, int(token)))
        elif names:
            if token not in COUNT_NAMES:
                raise CountError(f"unknown count {token!r}; counts are {', '.join(COUNT_NAMES)}")
            terms.append((sign, token))
        else:
            try:
                pointers.refuse_wildcard(token)
            except pointers.PointerError as exc:
                raise CountError(f"{token!r}: {exc}") from None
            if not token.startswith("/"):
                raise CountError(f"{token!r} is neither a JSON pointer nor an integer")
            terms.append((sign, token))
    return terms


def _pointer_expr(value: str | int) -> str | int:
    parse(str(value))
    return value


def _name_expr(value: str | int) -> str | int:
    parse(str(value), names=True)
    return value


def _expr_schema(term: str) -> dict[str, Any]:
    # What `parse` reads, for the published schema (an editor flags a bad expression).
    pattern = rf"^\s*{term}(\s+[+-]\s+{term})*\s*$"
    text = {"type": "string", "format": "jobgate-count-expression", "pattern": pattern}
    return {"anyOf": [text, {"type": "integer"}]}


_POINTER_TERM = r"(\d+|(/(?!\*(\s|/|$))([^~/\s]|~[01])*)+)"
_NAME_TERM = rf"(\d+|{'|'.join(COUNT_NAMES)})"
Expr = Annotated[
    str | int, AfterValidator(_pointer_expr), WithJsonSchema(_expr_schema(_POINTER_TERM))
]  # over pointers
NameExpr = Annotated[
    str | int, AfterValidator(_name_expr), WithJsonSchema(_expr_schema(_NAME_TERM))
]  # over count names


def as_count(value: Any) -> int | None:
    """A count as providers write it: an integer, an integral float, or digits in a string
    (proto3 JSON writes int64 as a string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    return None


def evaluate(
    expr: str | int, resolve: Callable[[str], int | None], *, names: bool = False
) -> int | None:
    """The expression's value; ``None`` when a term resolves to nothing."""
    total = 0
    for sign, term in parse(str(expr), names=names):
        value = term if isinstance(term, int) else resolve(term)
        if value is None:
            return None
        total += sign * value
    return total


class CountsSpec(SpecModel):
    """Where a profile reads item counts, and from which body. Each count is an expression:
    JSON pointers and integers joined by `` + `` or `` - `` (spaces required)."""

    source: Literal["status", "result", "items"] = "status"
    """``status``: the status answer; ``result``: the JSON result document; ``items``:
    count the result lines (then no expressions)."""
    missing_is_zero: bool = False
    """``true`` for proto3 JSON, which leaves zero counts out."""
    unit: Annotated[str, Field(pattern=r"^[a-z][a-z ]{0,39}$")] = Field(
        "items", examples=["characters"]
    )
    """What one count counts, in the plural (``characters`` for Cloud Translation): said
    with every number an agent reads. A unit other than ``items`` is never a list of
    failed items (docs/profiles.md, "Counts an agent can check")."""
    total: Expr | None = Field(None, examples=["/request_counts/total"])
    """How many items the job has."""
    succeeded: Expr | None = Field(None, examples=["/request_counts/completed"])
    """How many succeeded."""
    failed: Expr | None = Field(None, examples=["/request_counts/failed"])
    """How many ran and failed."""
    not_processed: Expr | None = Field(
        None,
        examples=["/request_counts/total - /request_counts/completed - /request_counts/failed"],
    )
    """How many never ran (expired, cancelled, never started)."""

    @model_validator(mode="after")
    def _something(self) -> CountsSpec:
        given = [getattr(self, n) for n in COUNT_NAMES]
        if self.source != "items" and all(v is None for v in given):
            raise ValueError("give at least one count (total, succeeded, failed, not_processed)")
        if self.source == "items" and any(v is not None for v in given):
            raise ValueError("source items counts result lines; it takes no expressions")
        return self


@dataclass(frozen=True)
class Counts:
    """Item counts of one remote job; ``None`` where the provider says nothing."""

    total: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    not_processed: int | None = None

    def known(self) -> bool:
        return any(getattr(self, n) is not None for n in COUNT_NAMES)

    def unaccounted(self) -> int | None:
        """Items in ``total`` that no other count covers (negative: the counts disagree)."""
        if self.total is None:
            return None
        rest = [self.succeeded, self.failed, self.not_processed]
        return self.total - sum(v or 0 for v in rest)

    def value(self, name: str) -> int | None:
        """One count by name, for state-rule conditions."""
        return getattr(self, name) if name in COUNT_NAMES else None

    def as_items(self) -> dict[str, int] | None:
        """The driver's ``processed / succeeded / failed / not_processed``: ``failed`` is
        what ran and failed; ``not_processed`` what never ran (expired, cancelled) plus
        any items of ``total`` no count accounts for (never shown to have run)."""
        if not self.known():
            return None
        items: dict[str, int] = {}
        if self.succeeded is not None:
            items["succeeded"] = self.succeeded
        if self.failed is not None:
            items["failed"] = self.failed
        missing = max(self.unaccounted() or 0, 0)
        if self.not_processed is not None or missing:
            items["not_processed"] = (self.not_processed or 0) + missing
        processed = self.total
        if processed is None:
            processed = sum(v for v in (self.succeeded, self.failed, self.not_processed) if v)
        items["processed"] = processed
        return items


def read(spec: CountsSpec | None, body: Any) -> Counts | None:
    """The counts ``spec`` reads from ``body``; None without a spec or a readable count."""
    if spec is None or spec.source == "items":
        return None

    def resolve(pointer: str) -> int | None:
        found = pointers.get(body, pointer)
        if found is MISSING or found is None:
            return 0 if spec.missing_is_zero else None
        return as_count(found)

    values = {
        name: None if (expr := getattr(spec, name)) is None else evaluate(expr, resolve)
        for name in COUNT_NAMES
    }
    counts = Counts(**values)
    return counts if counts.known() else None
