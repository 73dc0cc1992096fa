"""What the resolve form says about each decision, and which one fits the reason.

Words for a person deciding, beside the form (docs/operations.md, "Deciding"): what
each decision does, and, per needs-attention state, the decision that usually fits.
The decision itself is recorded by `app.operations.services.attention.resolve`, which
refuses one that does not fit; this module only explains and preselects.
"""

from __future__ import annotations

from app.operations.domain.operation import Operation
from app.operations.domain.states import State

EXPLAINED: dict[str, str] = {
    "resume_observing": (
        "Keep watching the job the gateway already follows (it needs its remote job id). "
        "Give a new result deadline when the old one passed."
    ),
    "accept_job": (
        "You found this operation's job at the provider: enter its id. The gateway "
        "checks it is this operation's job (client reference, item ids, lookup; a count "
        "alone proves nothing: then tick force if you checked it yourself), then watches it."
    ),
    "retry_collection": (
        "The job finished: fetch and check its result again, for a transfer that failed "
        "or arrived damaged."
    ),
    "abandon": (
        "Stop all work on it; the agent is told it failed. A job at the provider, if any, "
        "is left as it is: cancel it there if it should stop."
    ),
    "acknowledge": "A person has seen the partial result; it leaves the attention list.",
}

# The approval form's two decisions on a create the policy holds (docs/policy.md).
APPROVAL_EXPLAINED: dict[str, str] = {
    "approve": "Send it: the gateway starts the create as any other, its deadlines counted "
    "from now.",
    "deny": "Never send it: the agent is told it was denied, with your reason.",
}

# The decision that usually fits each state, and why, shown as "fits this case".
FITS: dict[State, tuple[str, str]] = {
    State.RESULT_TIMED_OUT: (
        "resume_observing",
        "the job may still finish: keep watching with a new result deadline",
    ),
    State.CANCELLATION_UNCONFIRMED: (
        "resume_observing",
        "watch the job until the provider says it ended, cancelled or not",
    ),
    State.CREATE_UNCONFIRMED: (
        "accept_job",
        "look the job up at the provider by its client reference; if none exists, abandon",
    ),
    State.CONTRACT_VIOLATION: (
        "accept_job",
        "the provider named several jobs: accept the one that is this operation's",
    ),
    State.RESULT_UNAVAILABLE: (
        "retry_collection",
        "the job finished; its result could not be fetched in time",
    ),
    State.RESULT_VALIDATION_FAILED: (
        "abandon",
        "the result failed its checks (checksum, size or schema); fetching it again gives "
        "the same bytes unless the transfer was damaged (then retry_collection)",
    ),
}


def suggested(op: Operation, offered: list[str]) -> tuple[str | None, str | None]:
    """The decision to preselect for `op` among `offered`, and why it fits."""
    if offered == ["acknowledge"]:
        return "acknowledge", "a partial result waits for a person to see it"
    if op.state == State.STALLED:
        if op.remote_job_id:
            return "resume_observing", "the job is known: let the gateway try again"
        return "abandon", "no job is known at the provider and the gateway cannot go on"
    fit = FITS.get(State(op.state))
    if fit is None or fit[0] not in offered:
        return None, None
    return fit
