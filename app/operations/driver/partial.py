"""A confirmed cancellation with items done first: their output is kept, never dropped.

The outcome table (app/providers/outcome.py) says a `cancelled` job with some items
succeeded keeps that partial output and offers it. The state table has no
`result_collecting -> cancelled` (SPEC section 3), so the part done is fetched in the
same step that read the confirmed cancellation, before anything is written, and the
operation ends `cancelled` (the edge it already had) carrying it. A fetch that fails or
a result that fails its checks does not undo the confirmed cancellation: it ends
`cancelled` without the output, and a history note says why.
"""

from __future__ import annotations

from app.core.context import AppContext
from app.operations.driver.collect import checked
from app.operations.driver.decision import Decision, Note
from app.operations.driver.step_common import exchanges_of, read_result
from app.operations.models import Operation
from app.operations.states import State
from app.providers.outcome import outcome
from app.providers.profile import Profile
from app.providers.types import CallResult, Outcome

NOTE = "partial_output"  # the history kind of the note a dropped partial output leaves


async def keep_partial(
    ctx: AppContext, profile: Profile, op: Operation, res: CallResult, decision: Decision
) -> Decision:
    """`decision` (the status step's), with the partial output of a cancelled job added."""
    cls = res.remote_class
    if decision.to is not State.CANCELLED or cls is None or profile.result is None:
        return decision
    if not outcome(cls, res.counts).keep_partial:
        return decision
    got = await read_result(ctx, profile, op, res)
    decision.exchanges += exchanges_of(got)
    if got.outcome is not Outcome.OK or got.result is None:
        why = f"the partial output could not be fetched ({got.outcome.value}); not kept"
        decision.notes.append(Note(NOTE, why, {"outcome": got.outcome.value}))
        return decision
    verdict, fields = await checked(ctx, profile, op, got)
    if not verdict.ok:
        why = f"the partial output failed its checks ({verdict.code}); not kept"
        decision.notes.append(Note(NOTE, why, {"check": verdict.code}))
        return decision
    decision.fields.update(fields)
    decision.failed_items = list(got.failed_items)
    done = fields.get("result_summary", {}).get("succeeded", 0)
    decision.cause += f"; the {done} items done before it are kept"
    return decision
