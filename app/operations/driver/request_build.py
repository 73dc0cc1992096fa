"""A create the gateway cannot turn into a provider request ends `failed`, recorded.

The provider client builds the request before sending anything; when it cannot
(a profile template that does not fit the input, an input too deep to copy, a
credential that is not configured) it answers REJECTED with no status code and
says why in the exchange. Retrying would fail the same way every time, so the
operation fails at once with `request_build_failed`, and the history row says
that nothing was sent.
"""

from __future__ import annotations

from app.operations.domain.states import Evidence, EvidenceKind, State
from app.operations.driver.decision import Decision
from app.operations.driver.step_common import exchanges_of
from app.providers.calls.types import CallResult, Outcome

CODE = EvidenceKind.REQUEST_BUILD_FAILED.value


def build_failure(res: CallResult) -> Decision | None:
    """The `failed` decision for a create that was never sent, else None."""
    if res.outcome != Outcome.REJECTED or res.exchange.status_code is not None:
        return None
    why = res.exchange.error or "the request could not be built"
    return Decision(
        State.FAILED,
        f"the create request could not be built; nothing was sent ({why})",
        Evidence(EvidenceKind.REQUEST_BUILD_FAILED),
        {
            "error": {
                "code": CODE,
                "message": "The gateway could not build the provider request for this "
                f"operation, so nothing was sent: {why.rstrip().rstrip('.')}. Retrying will "
                "not help: start a new operation with a corrected input, or fix the provider "
                "profile.",
                "details": {"source": "gateway"},
            }
        },
        exchanges=exchanges_of(res),
    )
