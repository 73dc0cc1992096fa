"""The policy file's model (version 1) and how a rule selects a create.

A rule selects creates by any of API key name (`key`, or one of `keys`), role, provider,
kind and labels (every selector it names must match; one it leaves out matches
anything). Labels are the agent's own: a rule that must bind an agent selects its key,
never a label it could leave out (docs/policy.md). A rule sets any of
`max_in_flight`, `creates_per_minute`, `budget`, `cost` and `approval`
(docs/policy.md, "The file").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.auth.models import Role
from app.providers.expressions import pointers

VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PerItem(_Strict):
    """Cost units per item of the input: the items are the array (or the number) at
    `pointer` in the create's `input`."""

    pointer: str = Field(description="A JSON pointer into `input`, e.g. `/items`.")
    units: float = Field(ge=0, description="Cost units per item.")

    @field_validator("pointer")
    @classmethod
    def _pointer(cls, value: str) -> str:
        try:
            pointers.parse(value)
            pointers.refuse_wildcard(value)
        except pointers.PointerError as exc:
            raise ValueError(str(exc)) from None
        return value


class Cost(_Strict):
    """What one create costs: `per_create`, plus `per_item` for each item of the input."""

    per_create: float = Field(default=0, ge=0)
    per_item: PerItem | None = None


class Budget(_Strict):
    """Cost units one API key may spend on the creates this rule selects per UTC day."""

    per_day: float = Field(gt=0)


class ApprovalAbove(_Strict):
    """Approval for a create whose cost is above `cost`."""

    above_cost: float = Field(ge=0)


class Rule(_Strict):
    """One rule: selectors (all named ones must match) and what it sets."""

    name: str | None = Field(default=None, min_length=1, max_length=64)
    key: str | None = Field(default=None, min_length=1, description="An API key's name.")
    keys: list[str] | None = Field(
        default=None,
        min_length=1,
        description="API key names: the create's key must be one of them (its principal).",
    )
    role: Role | None = None
    provider: str | None = Field(default=None, min_length=1)
    kind: str | None = Field(default=None, min_length=1)
    labels: dict[str, str] = Field(default_factory=dict)

    max_in_flight: int | None = Field(default=None, ge=0)
    creates_per_minute: int | None = Field(default=None, ge=0)
    budget: Budget | None = None
    cost: Cost | None = None
    approval: Literal["always"] | ApprovalAbove | None = None

    @field_validator("approval", mode="before")
    @classmethod
    def _approval(cls, value: object) -> object:
        if value is None or value == "always" or isinstance(value, dict):
            return value
        raise ValueError("must be 'always' or {above_cost: N}")

    @model_validator(mode="after")
    def _sets_something(self) -> Rule:
        if not any(
            v is not None
            for v in (
                self.max_in_flight,
                self.creates_per_minute,
                self.budget,
                self.cost,
                self.approval,
            )
        ):
            raise ValueError(
                "sets nothing: give max_in_flight, creates_per_minute, budget, cost or approval"
            )
        return self


class Policy(_Strict):
    """The whole file: `version: 1` and the rules, in order."""

    version: Literal[1]
    rules: list[Rule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> Policy:
        names = [r.name for r in self.rules if r.name]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"rule names must be unique: {', '.join(dup)}")
        return self

    def named(self) -> list[tuple[str, Rule]]:
        """Every rule with the name metrics and refusals use (`rule N` when unnamed)."""
        return [(r.name or f"rule {i}", r) for i, r in enumerate(self.rules, start=1)]


@dataclass(frozen=True)
class Subject:
    """What a rule is matched against: who creates, and what."""

    key: str
    role: str
    provider: str
    kind: str
    labels: dict[str, str]


def matches(rule: Rule, s: Subject) -> bool:
    """True when every selector the rule names matches the create."""
    if rule.key is not None and rule.key != s.key:
        return False
    if rule.keys is not None and s.key not in rule.keys:
        return False
    if rule.role is not None and rule.role.value != s.role:
        return False
    if rule.provider is not None and rule.provider != s.provider:
        return False
    if rule.kind is not None and rule.kind != s.kind:
        return False
    return all(s.labels.get(k) == v for k, v in rule.labels.items())


def same_scope(rule: Rule, provider: str, kind: str, labels: dict[str, str] | None) -> bool:
    """An existing operation of the same key counts against `rule` when the rule's
    operation selectors (provider, kind, labels) select it too."""
    return matches(
        rule.model_copy(update={"key": None, "keys": None, "role": None}),
        Subject("", "", provider, kind, labels or {}),
    )
