"""Before an operator's `accept_job`: the job is no other operation's, what the
provider shows of it fits this operation, and something it shows proves it is this
operation's (docs/agent-api.md, "Resolve"; docs/operations.md, "accept_job").

The checks, in order, each refusal writing nothing:

- **bound elsewhere**: another operation already follows this job (409
  `remote_job_bound`, naming it): two operations must never follow one job (the
  database's unique index on provider and job id holds it against a concurrent bind);
- **unreadable**: the provider could not be asked about the job (409
  `remote_job_unverified`: transport failure, 5xx, 429, no profile or credential here);
- **not this operation's**: the provider has no such job, or shows a client reference
  other than this operation's id (where the profile reads one: `lookup.match`), or an
  item count other than the input's (where the profile counts items from the status
  answer and the kind names its input's items: `kinds.<kind>.input_items`), or results
  carrying item ids the input does not declare (app/operations/services/accept_identity.py)
  (422 `remote_job_mismatch`);
- **unproven**: nothing the provider shows proves the job is this operation's (a count
  is no proof): refused (409 `remote_job_unproven`) unless the operator says `force`,
  and then recorded as forced.

What was checked, and the provider reads themselves, are recorded with the decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.db.txn import Txn
from app.core.http.errors import Conflict, Invalid
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.services import accept_identity as identity
from app.providers.calls.types import CallResult, Exchange, Outcome
from app.providers.expressions import pointers
from app.providers.expressions.pointers import MISSING
from app.providers.language.profile import Profile


@dataclass(frozen=True)
class Checked:
    """A job that passed: the provider reads that showed it (the status read first), what
    was compared, and what proved it is this operation's (empty when forced)."""

    exchanges: list[Exchange]
    checks: dict[str, Any]
    proven_by: list[str]

    @property
    def forced(self) -> bool:
        return not self.proven_by


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


async def verify(ctx: AppContext, op: Operation, job_id: str, *, force: bool = False) -> Checked:
    """Every check; raises the refusal, or returns what was checked."""
    async with ctx.db.read() as txn:
        await not_bound_elsewhere(txn, op, job_id)
    profile = ctx.profiles.get(op.provider)
    if profile is None:
        raise _unverified(op, job_id, f"the profile {op.provider!r} is not loaded here")
    res = await ctx.client.status(
        profile, job_id, trace_id=op.trace_id, input=op.input, kind=op.kind
    )
    if res.outcome == Outcome.NOT_FOUND:
        raise _mismatch(op, job_id, "not_found", "the provider has no such job (HTTP 404)")
    if res.outcome != Outcome.OK:
        raise _unverified(op, job_id, _what_went_wrong(res))
    exchanges = [res.exchange]
    proven: list[str] = []
    checks: dict[str, Any] = {"remote_state": res.remote_state}
    shown = _client_reference(profile, res)
    if shown is not None:
        checks["client_reference"] = shown
        if shown != op.id:
            why = f"it carries client reference {shown}, not this operation's id"
            raise _mismatch(op, job_id, "client_reference", why, shown=shown, expected=op.id)
        proven.append("client_reference")
    items, expected = _item_counts(profile, op, res)
    if items is not None and expected is not None:
        checks["items"] = {"provider": items, "input": expected}
        if items != expected:
            why = f"it holds {items} items and this operation's input has {expected}"
            raise _mismatch(op, job_id, "item_count", why, shown=items, expected=expected)
    ids = await identity.compare_items(ctx, profile, op, job_id, res)
    exchanges += ids.exchanges
    if ids.check is not None:
        checks["item_ids"] = ids.check
    if ids.foreign:
        some = ", ".join(ids.foreign[: identity.SHOWN_IDS])
        mine = ", ".join(ids.declared[: identity.SHOWN_IDS])
        why = (
            f"its results carry item ids this operation's input does not declare ({some}; "
            f"the input declares {mine})"
        )
        foreign = ids.foreign[: identity.SHOWN_IDS]
        raise _mismatch(
            op, job_id, "item_ids", why, shown=foreign, expected=ids.declared[: identity.SHOWN_IDS]
        )
    if ids.proven:
        proven.append("item_ids")
    if not proven:
        listed_ex, listed, by_lookup = await identity.listed_by_lookup(ctx, profile, op, job_id)
        exchanges += listed_ex
        if listed is not None:
            checks["lookup"] = listed
        if by_lookup:
            proven.append("lookup")
    checks["proven_by"] = proven
    if not proven:
        if not force:
            raise _unproven(op, job_id, checks)
        checks["forced"] = True
    return Checked(exchanges, checks, proven)


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


def _unproven(op: Operation, job_id: str, checks: dict[str, Any]) -> Conflict:
    return Conflict(
        "remote_job_unproven",
        f"The provider shows nothing that proves job {job_id} is {op.id}'s: no client "
        "reference, no item ids to compare, no lookup listing it (a matching count proves "
        "nothing). Nothing was written. Check the job at the provider yourself, then send "
        "the same decision with force: true (recorded as accepted without proof), or "
        "abandon it.",
        {"remote_job_id": job_id, "checked": checks},
    )


def _mismatch(op: Operation, job_id: str, check: str, why: str, **seen: Any) -> Invalid:
    return Invalid(
        "remote_job_mismatch",
        f"Job {job_id} is not this operation's: {why}. Nothing was written; find the job "
        f"made for {op.id}, or abandon it.",
        {"remote_job_id": job_id, "check": check, **seen},
    )
