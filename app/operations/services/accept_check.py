"""Before an operator's `accept_job`: the job is no other operation's, and what the
provider shows of it fits this operation (docs/agent-api.md, "Resolve").

Three checks, in order, each refusal writing nothing:

- **bound elsewhere**: another operation already follows this job (409
  `remote_job_bound`, naming it): two operations must never follow one job;
- **unreadable**: the provider could not be asked about the job (409
  `remote_job_unverified`: transport failure, 5xx, 429, no profile or credential here);
- **not this operation's**: the provider has no such job, or shows a client reference
  other than this operation's id (where the profile reads one: `lookup.match`), or an
  item count other than the input's (where the profile counts items from the status
  answer and the kind names its input's items: `kinds.<kind>.input_items`) (422
  `remote_job_mismatch`).

What was checked, and the status read itself, are recorded with the decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.db.txn import Txn
from app.core.http.errors import Conflict, Invalid
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.providers.calls.types import CallResult, Exchange, Outcome
from app.providers.expressions import pointers
from app.providers.expressions.pointers import MISSING
from app.providers.language.profile import Profile


@dataclass(frozen=True)
class Checked:
    """A job that passed: the status read that showed it, and what was compared."""

    exchange: Exchange
    checks: dict[str, Any]


async def not_bound_elsewhere(txn: Txn, op: Operation, job_id: str) -> None:
    """Refuse (409 `remote_job_bound`) a job another operation already follows."""
    other = await repo.job_owner(txn, op.provider, job_id, other_than=op.id)
    if other is None:
        return
    raise Conflict(
        "remote_job_bound",
        f"Job {job_id} at {op.provider} is already bound to operation {other.id} "
        f"({other.state}); accepting it for {op.id} would have two operations follow one "
        f"job. Nothing was written. Find the job made for {op.id}, or abandon it.",
        {"remote_job_id": job_id, "bound_to": other.id},
    )


async def verify(ctx: AppContext, op: Operation, job_id: str) -> Checked:
    """All three checks; raises the refusal, or returns what was checked."""
    async with ctx.db.read() as txn:
        await not_bound_elsewhere(txn, op, job_id)
    profile = ctx.profiles.get(op.provider)
    if profile is None:
        raise _unverified(op, job_id, f"the profile {op.provider!r} is not loaded here")
    res = await ctx.client.status(profile, job_id, trace_id=op.trace_id)
    if res.outcome == Outcome.NOT_FOUND:
        raise _mismatch(op, job_id, "not_found", "the provider has no such job (HTTP 404)")
    if res.outcome != Outcome.OK:
        raise _unverified(op, job_id, _what_went_wrong(res))
    checks: dict[str, Any] = {"remote_state": res.remote_state}
    shown = _client_reference(profile, res)
    if shown is not None:
        checks["client_reference"] = shown
        if shown != op.id:
            why = f"it carries client reference {shown}, not this operation's id"
            raise _mismatch(op, job_id, "client_reference", why, shown=shown, expected=op.id)
    items, expected = _item_counts(profile, op, res)
    if items is not None and expected is not None:
        checks["items"] = {"provider": items, "input": expected}
        if items != expected:
            why = f"it holds {items} items and this operation's input has {expected}"
            raise _mismatch(op, job_id, "item_count", why, shown=items, expected=expected)
    return Checked(res.exchange, checks)


def _client_reference(profile: Profile, res: CallResult) -> str | None:
    """The client reference the job shows, where the profile reads one (`lookup.match`)."""
    lookup = profile.lookup
    if lookup is None or lookup.by != "client_reference" or lookup.match is None:
        return None
    value = pointers.get(res.body, lookup.match)
    return None if value is MISSING or value is None else str(value)


def _item_counts(profile: Profile, op: Operation, res: CallResult) -> tuple[int | None, int | None]:
    """(the provider's item count, the input's), each None where unknown. A total of 0
    is unknown too: a job still validating (OpenAI) counts nothing yet."""
    total = res.counts.total if res.counts is not None else None
    spec = profile.kinds.get(op.kind)
    where = spec.input_items if spec is not None else None
    found = pointers.get(op.input, where) if where is not None else MISSING
    expected = len(found) if isinstance(found, list) else None
    return (total if total else None), expected


def _what_went_wrong(res: CallResult) -> str:
    ex = res.exchange
    if ex.status_code is not None:
        return f"the provider answered HTTP {ex.status_code}"
    return f"no answer: {(ex.error or 'transport failure')[:200]}"


def _unverified(op: Operation, job_id: str, why: str) -> Conflict:
    return Conflict(
        "remote_job_unverified",
        f"jobgate could not check job {job_id} at {op.provider} ({why}), and accepts no job "
        "it has not seen. Nothing was written; try again when the provider answers.",
        {"remote_job_id": job_id},
    )


def _mismatch(op: Operation, job_id: str, check: str, why: str, **seen: Any) -> Invalid:
    return Invalid(
        "remote_job_mismatch",
        f"Job {job_id} is not this operation's: {why}. Nothing was written; find the job "
        f"made for {op.id}, or abandon it.",
        {"remote_job_id": job_id, "check": check, **seen},
    )
