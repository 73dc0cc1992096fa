"""A confirmed cancellation: what the provider's documents show is kept with it.

The outcome table (app/providers/answers/outcome.py) says a `cancelled` job's documents are
collected: the items done before the cancel are kept and offered as partial output,
and the items that did not succeed (cancelled, expired, failed: the provider's own
result lines where it writes them) are listed at `/errors`, with the counts in
`result_summary`. The state table has no `result_collecting -> cancelled`
(docs/agent-api.md, the state machine), so the documents are read in the same step that
read the confirmed cancellation, before anything is written, and the operation ends
`cancelled` (the edge it already had) carrying them. A fetch that fails, or an output
that fails its checks, does not undo the confirmed cancellation: it ends `cancelled`
without them, and a history note says why. An output that holds no item is not kept:
no words ever offer what `GET /result` would not show.
"""

from __future__ import annotations

from app.core.db.write_faults import StorageFull
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import State
from app.operations.driver.collect import checked, holds_items, summary_for
from app.operations.driver.decision import Decision, Note
from app.operations.driver.step_common import exchanges_of, read_result
from app.providers.answers.outcome import Facts, judge
from app.providers.calls.types import CallResult, Outcome
from app.providers.language.profile import Profile

NOTE = "partial_output"  # the history kind of the note a dropped partial output leaves


async def keep_partial(
    ctx: AppContext, profile: Profile, op: Operation, res: CallResult, decision: Decision
) -> Decision:
    """`decision` (the status step's), with a cancelled job's documents added."""
    cls = res.remote_class
    if decision.to is not State.CANCELLED or cls is None:
        return decision
    verdict = judge(Facts(cls, res.counts, 0, profile.itemless))
    if verdict.counts is not None:
        decision.fields["result_summary"] = summary_for(profile, verdict.counts)
    if not verdict.collect:
        return decision
    got = res  # a result inline in the status answer: this answer is the document
    if profile.result is not None:
        got = await read_result(ctx, profile, op, res)
        decision.exchanges += exchanges_of(got)
    if got.outcome is not Outcome.OK:
        why = f"the documents could not be fetched ({got.outcome.value}); not kept"
        decision.notes.append(Note(NOTE, why, {"outcome": got.outcome.value}))
        return decision
    decision.failed_items = list(got.failed_items)
    decision.fields["errors_listed"] = len(got.failed_items)
    found = judge(Facts(cls, got.counts or res.counts, len(got.failed_items), profile.itemless))
    if found.counts is not None:
        decision.fields["result_summary"] = summary_for(profile, found.counts)
    if not found.keep_partial or not holds_items(got.result):
        return decision
    try:
        check, fields = await checked(ctx, profile, op, got)
    except StorageFull as full:
        decision.notes.append(Note(NOTE, f"the partial output was not kept: {full}", {}))
        return decision
    if not check.ok:
        why = f"the partial output failed its checks ({check.code}); not kept"
        decision.notes.append(Note(NOTE, why, {"check": check.code}))
        return decision
    fields.pop("result_summary", None)  # the counts above, listed items included
    decision.fields.update(fields)
    done = decision.fields.get("result_summary", {}).get("succeeded", 0)
    decision.cause += f"; the {done} items done before it are kept"
    return decision
