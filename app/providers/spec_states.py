"""The profile's state rules: how a provider's answer becomes a remote class.

``pointers.state`` names the provider's own word (shown to people as ``remote_state``)
and ``states`` maps words to classes, as in v1. ``state_rules`` come first: a list of
rules, each a list of conditions that must all hold, the first matching rule wins.
A condition reads one value, either a JSON pointer into the answer or an expression
over item counts (app.providers.counts), and compares it:

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

from pydantic import Field, model_validator

from app.providers.counts import NameExpr
from app.providers.spec_base import Pointer, SpecModel
from app.providers.types import RemoteClass

Scalar = str | int | float | bool
_NUMERIC = ("gt", "ge", "lt", "le")


class Condition(SpecModel):
    """One test on one value: a pointer into the answer or a count expression."""

    pointer: Pointer | None = None
    count: NameExpr | None = None
    equals: Scalar | None = None  # for "is null or absent" write present: false
    one_of: Annotated[list[Scalar], Field(min_length=1)] | None = None
    present: bool | None = None  # the member exists and is not null
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None

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

    when: Annotated[list[Condition], Field(min_length=1)]
    then: RemoteClass

    @model_validator(mode="before")
    @classmethod
    def _one_condition(cls, data: Any) -> Any:
        # `when: {pointer: ..., equals: ...}` is a rule with one condition.
        if isinstance(data, dict) and isinstance(data.get("when"), dict):
            return {**data, "when": [data["when"]]}
        return data
