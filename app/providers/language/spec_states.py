"""The profile's state rules: how a provider's answer becomes a remote class.

``pointers.state`` names the provider's own word (shown to people as ``remote_state``)
and ``states`` maps words to classes, as in v1. ``state_rules`` come first: a list of
rules, each a list of conditions that must all hold, the first matching rule wins.
A condition reads one value, either a JSON pointer into the answer or an expression
over item counts (app.providers.language.counts), and compares it:

```yaml
state_rules:
  - when: [{pointer: /done, equals: true}, {pointer: /error/code, equals: 1}]
    then: cancelled
  - when: [{pointer: /processing_status, equals: ended}, {count: succeeded, equals: 0}]
    then: failed
```

Nothing matched and a word the map does not know: ``running``, never a success.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, GetJsonSchemaHandler, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from app.providers.language.counts import NameExpr
from app.providers.language.spec_base import Pointer, SpecModel, one_or_many
from app.providers.language.words import RemoteClass

Scalar = str | int | float | bool
_NUMERIC = ("gt", "ge", "lt", "le")


class Condition(SpecModel):
    """One test on one value: a pointer into the answer or a count expression. Numbers
    compare digit strings as numbers; equality is JSON equality (``true`` is not ``1``)."""

    pointer: Pointer | None = Field(None, examples=["/processing_status"])
    """The value: a pointer into the answer."""
    count: NameExpr | None = Field(None, examples=["total - succeeded"])
    """The value: an expression over the counts (``total``, ``succeeded``, ``failed``,
    ``not_processed``, integers, `` + `` and `` - ``)."""
    equals: Scalar | None = Field(None, examples=["ended"])
    """Holds when the value equals this (for "null or absent" write ``present: false``)."""
    one_of: Annotated[list[Scalar], Field(min_length=1)] | None = Field(
        None, examples=[["failed", "expired"]]
    )
    """Holds when the value is one of these."""
    present: bool | None = None
    """``true``: the member exists and is not null; ``false``: absent or null."""
    gt: float | None = None
    """Holds when the value is a number greater than this."""
    ge: float | None = None
    """Holds when the value is a number at least this."""
    lt: float | None = None
    """Holds when the value is a number less than this."""
    le: float | None = None
    """Holds when the value is a number at most this."""

    @model_validator(mode="after")
    def _complete(self) -> Condition:
        if (self.pointer is None) == (self.count is None):
            raise ValueError("give exactly one of pointer or count")
        tests = ["equals", "one_of", "present", *_NUMERIC]
        if not any(getattr(self, t) is not None for t in tests):
            raise ValueError(f"give a test: {', '.join(tests)}")
        if self.count is not None and (self.present is not None or self.one_of is not None):
            raise ValueError("a count takes equals, gt, ge, lt or le")
        return self


class StateRule(SpecModel):
    """``then`` is the class when every condition in ``when`` holds."""

    when: Annotated[list[Condition], Field(min_length=1)] = Field(
        examples=[[{"pointer": "/processing_status", "equals": "ended"},
                   {"count": "succeeded", "equals": 0}]]
    )  # fmt: skip
    """The conditions, all of which must hold (one condition needs no list)."""
    then: RemoteClass = Field(examples=["failed"])
    """The class the rule gives."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        one_or_many(handler.resolve_ref_schema(schema), "when")
        return schema

    @model_validator(mode="before")
    @classmethod
    def _one_condition(cls, data: Any) -> Any:
        # `when: {pointer: ..., equals: ...}` is a rule with one condition.
        if isinstance(data, dict) and isinstance(data.get("when"), dict):
            return {**data, "when": [data["when"]]}
        return data
