"""A create proven to have made no job: send it again after the backoff, or end `failed`.

Proof is either a create whose request never left this process (no connection was
made) or an answer the profile lists under `idempotency.nothing_created` (e.g. an
overload refusal). The operation stays in `create_pending` (a `create_pending ->
create_pending` transition carrying the proof) and the next step may send again
(`single_create.after_nothing_created`), within the create deadline; past it, nothing
was started and the operation is `failed`, in words that say so. docs/single-create.md,
"Nothing was made".
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import Evidence, EvidenceKind, State
from app.operations.driver.decision import Decision
from app.operations.driver.step_common import deadline_passed, delay_for
from app.operations.repository import CreateTally
from app.providers.calls.types import CallResult, Exchange, NoJobProof
from app.providers.language.profile import Profile

NOT_SENT = "create_not_sent"  # error code: no create ever reached the provider
NOT_STARTED = "create_not_started"  # error code: the provider refused every create


def after_proof(
    ctx: AppContext,
    profile: Profile,
    op: Operation,
    res: CallResult,
    proof: NoJobProof,
    ex: list[Exchange],
    *,
    unsent_before: bool,
) -> Decision:
    """The create made no job: again after the backoff (the provider's Retry-After
    wins), unless that would be past the create deadline."""
    delay = delay_for(ctx, profile, op, res)
    all_unsent = unsent_before and proof.not_sent
    evidence = Evidence(
        EvidenceKind.NOTHING_CREATED, {"proof": proof.why, "not_sent": proof.not_sent}
    )
    if deadline_passed(op.create_deadline_at, ctx.now() + timedelta(seconds=delay)):
        return Decision(
            State.FAILED,
            f"nothing was created ({proof.why}); the create deadline comes before another try",
            evidence,
            {"error": _error(proof.why, all_unsent)},
            exchanges=ex,
        )
    return Decision(
        State.CREATE_PENDING,
        f"nothing was created ({proof.why}); the create goes again in {delay:.3g} s",
        evidence,
        {"poll_attempt": op.poll_attempt + 1},
        delay=delay,
        exchanges=ex,
    )


def gave_up(op: Operation, tally: CreateTally) -> Decision:
    """Past the create deadline with every create proven to have made no job."""
    proof = tally.last_proof or "every create was proven to make no job"
    return Decision(
        State.FAILED,
        f"create deadline passed; nothing was created (last: {proof})",
        Evidence(EvidenceKind.NOTHING_CREATED, {"proof": proof, "creates": tally.proven}),
        {"error": _error(proof, tally.unsent == tally.proven)},
    )


def _error(proof: str, all_unsent: bool) -> dict[str, Any]:
    """What the agent reads: nothing was started (and, if so, nothing ever left)."""
    if all_unsent:
        return {
            "code": NOT_SENT,
            "message": (
                f"The create never reached the provider ({proof}), and the create deadline "
                "passed: nothing was sent and nothing was started. Start a new operation "
                "once the provider can be reached."
            ),
            "details": {"source": "gateway", "nothing_created": True, "sent": False},
        }
    return {
        "code": NOT_STARTED,
        "message": (
            f"The provider started nothing: every create was refused or never arrived "
            f"(last: {proof}), and the create deadline passed. Nothing was started. Start "
            "a new operation later."
        ),
        "details": {"source": "provider", "nothing_created": True},
    }
