"""Read and check a policy file: every problem at once, one line each, never a value.

Checked at start like the provider profiles (app/cli.py, app/main.py): a bad file stops
the gateway with one line per problem. docs/policy.md is the reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from app.policy.rules import VERSION, Policy
from app.providers.language.profile import Profile


class PolicyError(ValueError):
    """The policy file is unreadable or invalid; `problems` holds one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _read(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError([f"{path}: cannot read: {exc.strerror}"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise PolicyError([f"{path}: invalid YAML{where}: {problem}"]) from None


def _errors(path: Path, exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():  # locations and messages only: never the input's values
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = str(err["msg"]).removeprefix("Value error, ")
        out.append(f"{path}: {loc}: {msg[:1].lower()}{msg[1:]}")
    return out


def _unknown_targets(path: Path, policy: Policy, profiles: Mapping[str, Profile]) -> list[str]:
    """A rule naming a provider or kind no profile has would never match: a typo."""
    out = []
    for i, rule in enumerate(policy.rules):
        if rule.provider is not None and rule.provider not in profiles:
            out.append(f"{path}: rules.{i}.provider: no provider profile named {rule.provider!r}")
        elif rule.kind is not None:
            kinds = (
                set(profiles[rule.provider].kinds)
                if rule.provider is not None
                else {k for p in profiles.values() for k in p.kinds}
            )
            if rule.kind not in kinds:
                out.append(f"{path}: rules.{i}.kind: no provider has a kind {rule.kind!r}")
    return out


def parse(path: Path, data: Any, profiles: Mapping[str, Profile] | None) -> Policy:
    """Check parsed YAML; raises `PolicyError` with every problem."""
    if not isinstance(data, dict):
        raise PolicyError([f"{path}: (top level): must be a mapping with version and rules"])
    problems = []
    if data.get("version") != VERSION:
        problems.append(f"{path}: version: must be {VERSION}")
    try:
        policy = Policy.model_validate({**data, "version": VERSION})
    except ValidationError as exc:
        raise PolicyError(problems + _errors(path, exc)) from None
    if profiles is not None:
        problems += _unknown_targets(path, policy, profiles)
    if problems:
        raise PolicyError(problems)
    return policy


def load_policy(path: Path | None, profiles: Mapping[str, Profile] | None = None) -> Policy | None:
    """The policy at `path` (None when no file is configured)."""
    if path is None:
        return None
    return parse(path, _read(path), profiles)
