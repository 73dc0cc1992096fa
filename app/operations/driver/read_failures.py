"""Reads that keep failing the same way (docs/operations.md, "Reads that keep failing").

A status or result read the provider refuses the same way every time (the same 4xx other
than 429, or the same 2xx nobody can read) will be refused again: waiting for the result
deadline only hides it. Each such refusal is counted on the row (`read_failures`,
`read_failure`, `read_failing_since`); a good answer clears the count; after
`JOBGATE_READ_FAILURES_TO_PERSON` in a row (with the usual backoff between them) a person
decides: `stalled` for a status read, `result_unavailable` for a result read. Timeouts,
5xx and 429 say nothing about the request and are waited out as before.

A result read whose status the profile declares as the job's own failure
(`result.job_failed_statuses`, e.g. a 422 after `COMPLETED`) is no read failure: the
collect step ends the operation `failed` with the provider's detail (`job_failed`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import Evidence, EvidenceKind, State
from app.operations.driver.decision import Decision, needs_human
from app.providers.calls.types import CallResult, Exchange
from app.providers.language.profile import Profile

CLEARED: dict[str, Any] = {"read_failures": 0, "read_failure": None, "read_failing_since": None}


def refusal(res: CallResult) -> str | None:
    """The way this answer refused the read, or None when it says nothing about the request
    (no answer, a 5xx, a 429) or was no refusal."""
    code = res.exchange.status_code
    if code is None or code == 429 or code >= 500:
        return None
    if 400 <= code < 500:
        return f"HTTP {code}"
    if 200 <= code < 300:
        return f"HTTP {code} without a readable answer"
    return None


def cleared(op: Operation) -> dict[str, Any]:
    """The fields that clear the count after a good answer (nothing when none is kept, so
    a quiet poll stays quiet)."""
    return dict(CLEARED) if op.read_failures or op.read_failure or op.read_failing_since else {}


def _said(res: CallResult) -> str:
    """What a read that is not counted got: its status, or the transport failure."""
    code = res.exchange.status_code
    if code is not None:
        return f"HTTP {code}"
    return (res.exchange.error or "no answer").split(":")[0][:80]


def counted(
    ctx: AppContext, op: Operation, res: CallResult, read: str
) -> tuple[dict[str, Any], int]:
    """The row fields for this answer that was not a good one, and the refusals in a row so
    far (0 for an answer that is not counted). `read_failing_since` is the first answer
    since the last good one, whatever it was; only refusals are counted (a timeout, 5xx or
    429 neither counts nor resets the count)."""
    since = op.read_failing_since or ctx.now()
    why = refusal(res)
    if why is None:
        fields: dict[str, Any] = {"read_failing_since": since}
        if not op.read_failures:
            fields["read_failure"] = f"{read} {_said(res)}"
        return fields, 0
    way = f"{read} {why}"
    n = op.read_failures + 1 if op.read_failure == way and op.read_failures else 1
    return {"read_failures": n, "read_failure": way, "read_failing_since": since}, n


def enough(ctx: AppContext, n: int) -> bool:
    return n >= ctx.settings.read_failures_to_person


def _stamp(at: Any) -> str:
    return at.isoformat() if isinstance(at, datetime) else str(at)


def status_to_person(
    op: Operation, res: CallResult, fields: dict[str, Any], exchanges: list[Exchange]
) -> Decision:
    """The status read was refused the same way N times in a row: `stalled`."""
    n, way, since = fields["read_failures"], fields["read_failure"], fields["read_failing_since"]
    code = res.exchange.status_code
    message = (
        f"The provider keeps answering {code} to the status read: the profile may be wrong "
        f"(or the job is gone). {n} reads in a row since {_stamp(since)} got that same "
        "answer, and more of them would get it too; the job itself may still go on at the "
        f"provider (job {op.remote_job_id})."
    )
    d = needs_human(
        State.STALLED,
        f"the provider answered {n} status reads in a row with {way.removeprefix('status ')}; "
        "polling stopped",
        Evidence(EvidenceKind.READS_FAILING, {"reads": n, "refusal": way, "since": _stamp(since)}),
        message,
        details=_details(op, res, n, way, since),
        exchanges=exchanges,
    )
    d.fields.update(fields)
    return d


def result_to_person(
    op: Operation, res: CallResult, fields: dict[str, Any], exchanges: list[Exchange]
) -> Decision:
    """The result read was refused the same way N times in a row: `result_unavailable`."""
    n, way, since = fields["read_failures"], fields["read_failure"], fields["read_failing_since"]
    code = res.exchange.status_code
    message = (
        f"The provider says the job is over, but keeps answering {code} to the result read: "
        f"the profile may be wrong. {n} reads in a row since {_stamp(since)} got that same "
        f"answer (job {op.remote_job_id})."
    )
    d = needs_human(
        State.RESULT_UNAVAILABLE,
        f"the provider answered {n} result reads in a row with {way.removeprefix('result ')}",
        Evidence(EvidenceKind.RESULT_UNAVAILABLE, {"reads": n, "refusal": way}),
        message,
        details=_details(op, res, n, way, since),
        exchanges=exchanges,
    )
    d.fields.update(fields)
    return d


def _details(op: Operation, res: CallResult, n: int, way: str, since: Any) -> dict[str, Any]:
    said = (res.exchange.response_body or "")[:500] if res.exchange.response_body else None
    return {
        "reads": n,
        "refusal": way,
        "failing_since": _stamp(since),
        "remote_job_id": op.remote_job_id,
        "provider_said": said,
    }


def job_failed(profile: Profile, res: CallResult) -> bool:
    """Whether this result read's answer is one the profile declares as the job's failure."""
    code = res.exchange.status_code
    return profile.result is not None and code in profile.result.job_failed_statuses
