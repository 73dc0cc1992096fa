"""What proves that a job an operator names is this operation's (docs/operations.md,
"accept_job: what proves the job is this operation's").

A count proves nothing: two batches of three requests each have three items. What the
provider shows that only this operation's job can carry is proof:

- **client reference**: the status answer shows this operation's id where the profile
  reads one (`lookup.match`), compared in `accept_check`;
- **item ids**: a job whose results the profile reads line by line with an item id
  (`result.documents[].items.id`, e.g. Anthropic's and OpenAI's `custom_id`), whose
  input declares its items (`kinds.<kind>.input_items`) carrying the same id, and whose
  results may be read again (`result.safe_to_repeat`): once the job has ended, its
  results are read and every id must be one the input declared;
- **lookup**: the profile's lookup (by the create token or the client reference) lists
  the job among this operation's.

A provider that shows none of these gives nothing to compare; `accept_check` then takes
the job only when the operator says `force`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.providers.calls.types import CallResult, Exchange, Outcome
from app.providers.expressions import pointers
from app.providers.expressions.pointers import MISSING
from app.providers.language.profile import Profile
from app.providers.language.words import RemoteClass

ENDED = {
    RemoteClass.SUCCEEDED,
    RemoteClass.SUCCEEDED_PARTIAL,
    RemoteClass.FAILED,
    RemoteClass.CANCELLED,
}
SHOWN_IDS = 5  # ids named in a refusal: enough to recognise a batch, never the whole list


@dataclass
class ItemIds:
    """The item-id comparison: what was read, and the ids that are not the input's."""

    exchanges: list[Exchange] = field(default_factory=list)
    check: dict[str, Any] | None = None  # recorded with the decision; None: not compared
    foreign: list[str] = field(default_factory=list)  # ids the input does not declare
    declared: list[str] = field(default_factory=list)
    proven: bool = False


def id_pointer(profile: Profile) -> str | None:
    """The item id inside one result line, from the first document that names one."""
    docs = profile.result.documents if profile.result is not None else []
    return next((d.items.id for d in docs if d.format == "jsonl" and d.items.id), None)


def declared_ids(profile: Profile, op: Operation) -> list[str] | None:
    """The ids the operation's input gives its items, at the result lines' id pointer;
    None when the kind names no items or any item lacks an id."""
    where = id_pointer(profile)
    spec = profile.kinds.get(op.kind)
    if where is None or spec is None or spec.input_items is None:
        return None
    items = pointers.get(op.input, spec.input_items)
    if not isinstance(items, list) or not items:
        return None
    ids = [pointers.get(item, where) for item in items]
    if any(i is MISSING or i is None or isinstance(i, dict | list) for i in ids):
        return None
    return [str(i) for i in ids]


def shown_ids(profile: Profile, res: CallResult) -> list[str]:
    """Every item id the collected results carry: succeeded lines and failed items."""
    where = id_pointer(profile)
    ok = res.result if isinstance(res.result, list) else []
    ids = [pointers.get(line, where) for line in ok] if where else []
    ids += [item.get("id") for item in res.failed_items if isinstance(item, dict)]
    return [str(i) for i in ids if i is not MISSING and i is not None]


async def compare_items(
    ctx: AppContext, profile: Profile, op: Operation, job_id: str, status: CallResult
) -> ItemIds:
    """Read an ended job's results and compare their item ids with the input's."""
    found = ItemIds()
    declared = declared_ids(profile, op)
    result = profile.result
    if declared is None or result is None:
        return found
    if not result.safe_to_repeat:
        found.check = {"compared": False, "why": "its results may be read only once"}
        return found
    if status.remote_class not in ENDED:
        found.check = {"compared": False, "why": "it has not ended: no results to read yet"}
        return found
    res = await ctx.client.result(profile, job_id, trace_id=op.trace_id, status=status)
    found.exchanges = [*res.extra_exchanges, res.exchange]
    if res.outcome != Outcome.OK:
        why = f"its results could not be read ({res.exchange.error or res.outcome.value})"
        found.check = {"compared": False, "why": why[:300]}
        return found
    shown = shown_ids(profile, res)
    found.declared = declared
    found.foreign = sorted(set(shown) - set(declared))
    found.proven = bool(shown) and not found.foreign
    found.check = {
        "compared": True,
        "shown": len(shown),
        "declared": len(declared),
        "foreign": found.foreign[:SHOWN_IDS],
    }
    return found


async def listed_by_lookup(
    ctx: AppContext, profile: Profile, op: Operation, job_id: str
) -> tuple[list[Exchange], dict[str, Any] | None, bool]:
    """(the lookup's exchanges, what it showed, whether it lists the job as this
    operation's). A job not listed proves nothing either way: listings lag."""
    ep = profile.lookup
    if ep is None:
        return [], None, False
    found = await ctx.client.lookup(
        profile,
        token=op.provider_token,
        client_reference=op.id,
        trace_id=op.trace_id,
        since=op.created_at - timedelta(seconds=ep.skew_seconds),
    )
    if found.outcome != Outcome.OK:
        return found.exchanges, {"by": ep.by, "listed": None, "why": "the lookup failed"}, False
    listed = job_id in found.job_ids
    return found.exchanges, {"by": ep.by, "listed": listed}, listed
