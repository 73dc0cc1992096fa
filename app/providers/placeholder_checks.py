"""Cross-field checks of a profile: every placeholder names a value its endpoint will have.

Which names a template may use depends on where it is (the create has the input,
status and result documents have the job id and the fields read from the status
answer). Problems are reported with their dotted field path, so the loader can say
``openai_batch.yaml: result.documents.1.path: unknown placeholder 'eror_file_id'``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from app.providers import templates

if TYPE_CHECKING:
    from app.providers.profile import Profile
    from app.providers.spec_base import Endpoint

# Values the gateway itself supplies; variables, fields and captures may not reuse them.
RESERVED = frozenset({"input", "kind", "client_reference", "token", "job_id", "reason"})
CREATE_NAMES = frozenset({"input", "kind", "client_reference", "token"})

Problem = tuple[str, str]  # (dotted path below the profile, message)


class FieldProblems(ValueError):
    """Several problems, each at its own field; the loader prints one line per problem."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p}: {m}" for p, m in problems))
        self.problems = problems


def _template(where: str, template: Any, allowed: Iterable[str]) -> list[Problem]:
    try:
        templates.check(template, frozenset(allowed))
    except templates.TemplateError as exc:
        return [(where, str(exc))]
    return []


def _endpoint(where: str, ep: Endpoint, allowed: frozenset[str]) -> list[Problem]:
    found: list[Problem] = []
    for part, template in ep.template_parts().items():
        found += _template(f"{where}.{part}", template, allowed)
    return found


def _names(profile: Profile) -> tuple[list[Problem], frozenset[str], frozenset[str]]:
    found: list[Problem] = []
    variables = frozenset(profile.vars)
    fields = frozenset(profile.pointers.fields)
    for name in sorted(variables & RESERVED):
        found.append((f"vars.{name}", f"{name!r} is a name the gateway supplies; pick another"))
    for name in sorted(fields & (RESERVED | variables)):
        found.append((f"pointers.fields.{name}", f"{name!r} is already a variable or reserved"))
    return found, variables, fields


def problems(profile: Profile) -> list[Problem]:
    """Every placeholder problem in the profile, in field order."""
    found, variables, fields = _names(profile)
    found += _template("headers", profile.headers, variables)
    found += _template("query", profile.query, variables)
    ref = profile.client_reference
    found += _template("client_reference.format", ref.format, variables | {"client_reference"})
    for kind, spec in profile.kinds.items():
        allowed = CREATE_NAMES | variables
        for i, step in enumerate(spec.create.prepare):
            where = f"kinds.{kind}.create.prepare.{i}"
            found += _endpoint(where, step, allowed)
            clash = sorted(set(step.capture) & allowed)
            if clash:
                found.append((f"{where}.capture", f"{clash[0]!r} is already a known name"))
            allowed = allowed | frozenset(step.capture)
        found += _endpoint(f"kinds.{kind}.create", spec.create, allowed)
    found += _endpoint("status", profile.status, variables | {"job_id"})
    if profile.cancel is not None:
        found += _endpoint("cancel", profile.cancel, variables | {"job_id", "reason"})
    if profile.result is not None:
        allowed = variables | fields | {"job_id"}
        for i, doc in enumerate(profile.result.documents):
            found += _endpoint(f"result.documents.{i}", doc, allowed)
    if profile.lookup is not None:
        found += _endpoint("lookup", profile.lookup, variables)
    fetch = profile.webhooks.secret_fetch
    if fetch is not None:
        found += _template("webhooks.secret_fetch.path", fetch.path, variables)
    if profile.pointers.state is None and not profile.state_rules:
        found.append(("pointers.state", "give pointers.state, state_rules, or both"))
    return found
