"""The result-collection step: fetch, check, store; only then `succeeded`."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from app.core.db.write_faults import StorageFull
from app.operations.domain.states import Evidence, EvidenceKind, State
from app.operations.driver import read_failures
from app.operations.driver.decision import Decision, Note, needs_human
from app.providers.answers.outcome import Facts, ResultClass, judge
from app.providers.calls.types import CallResult, Outcome
from app.providers.language.counts import Counts
from app.providers.language.words import RemoteClass
from app.results.validate import Rules, canonical, check
from app.results.validate import Verdict as CheckVerdict

if TYPE_CHECKING:
    from app.operations.context import AppContext
    from app.operations.domain.operation import Operation
    from app.providers.language.profile import Profile


_OUTPUT_FIELDS = ("result", "result_ref", "result_size", "result_sha256")
SUMMARY_KEYS = ("processed", "succeeded", "failed", "not_processed")  # `result_summary`
# A result with no room on the disk is fetched again this much later (scaled).
STORAGE_RETRY_SECONDS = 60.0
STORAGE_FULL = "storage_full"  # the history kind of the note it leaves
OFFLOAD_BYTES = 256 * 1024  # results carried in more bytes than this are checked in a thread


def rules_for(profile: Profile, op: Operation) -> Rules:
    """Profile defaults, tightened by the create request's `validation` (beside `input`,
    never read from it: `input` is the provider's)."""
    asked = op.validation if isinstance(op.validation, dict) else {}
    schema = asked.get("json_schema")
    bound = profile.validation.max_bytes
    return Rules(
        checksum=profile.validation.checksum,
        max_bytes=min(int(asked.get("max_bytes") or bound), bound),
        json_schema=schema if isinstance(schema, dict) else None,
        require_counts=bool(asked.get("require_counts", False)),
    )


async def collect_result(
    ctx: AppContext, profile: Profile, op: Operation, carry: CallResult | None
) -> Decision:
    """Use a result already in hand (sync create, inline status) or fetch it."""
    from app.operations.driver.step_common import (
        delay_for,
        exchanges_of,
        read_result,
        read_status,
    )

    now = ctx.now()
    res = carry if carry is not None and carry.result is not None else None
    exchanges = []
    if res is None:
        if profile.result is not None and not profile.result.safe_to_repeat and op.poll_attempt:
            return _unavailable(
                "the result endpoint is not safe to call twice and the first "
                "call did not return the result"
            )
        if profile.result is not None:
            # The status read that moved it here is reused: its fields address the
            # documents and its counts are the counts (one read saved). A create answer
            # is not a status answer: the documents are then addressed from a new read.
            status = (
                carry
                if carry is not None
                and carry.outcome == Outcome.OK
                and carry.exchange.operation == "status"
                else None
            )
            res = await read_result(ctx, profile, op, status)
        else:
            res = await read_status(ctx, profile, op)
        exchanges += exchanges_of(res)
    if (cut := next((d for d in res.documents if d.truncated), None)) is not None:
        # A document longer than its bound will be as long next time: not a retry.
        return needs_human(
            State.RESULT_VALIDATION_FAILED,
            f"document {cut.name} stopped at its bound ({cut.bytes} bytes read): result_too_large",
            Evidence(EvidenceKind.RESULT_INVALID, {"code": "result_too_large"}),
            f"the provider's {cut.name} document is larger than this gateway reads "
            f"(stopped at {cut.bytes} bytes); nothing of it was kept",
            details={"check": "result_too_large", "document": cut.name},
            exchanges=exchanges,
        )
    if res.outcome != Outcome.OK and read_failures.job_failed(profile, res):
        # The provider documents this answer as the job's own failure (docs/profiles.md).
        return Decision(
            State.FAILED,
            f"the result read was answered HTTP {res.exchange.status_code}, which the profile "
            "declares as the job's own failure",
            Evidence(EvidenceKind.REMOTE_FAILED, {"status": res.exchange.status_code}),
            {"error": job_failure(res), **read_failures.cleared(op)},
            exchanges=exchanges,
        )
    if res.outcome != Outcome.OK or res.result is None:
        failing, n = read_failures.counted(ctx, op, res, "result")
        if read_failures.enough(ctx, n):  # refused the same way again and again: a person
            return read_failures.result_to_person(op, res, failing, exchanges)
        if now >= op.result_deadline_at:
            d = _unavailable(f"result fetch kept failing ({res.outcome.value}) until the deadline")
            d.exchanges = exchanges
            return d
        return Decision(
            None,
            f"result not fetched yet ({res.outcome.value}); will retry",
            fields={"poll_attempt": op.poll_attempt + 1, **failing},
            delay=delay_for(ctx, profile, op, res),
            exchanges=exchanges,
        )
    return await _judge(ctx, profile, op, res, exchanges)


def job_failure(res: CallResult) -> dict[str, Any]:
    """The operation's error when a result read's answer is the job's failure: the
    provider's own error where the profile reads one, else its answer's body."""
    err = res.error if isinstance(res.error, dict) else {}
    said = err.get("message") or (res.exchange.response_body or "")[:1000]
    code = res.exchange.status_code
    return {
        "code": str(err.get("code") or "remote_failed"),
        "message": f"The provider answered the result read HTTP {code}: {said}"
        if said
        else f"The provider answered the result read HTTP {code} without a detail",
        "details": {"source": "provider", "status": code},
    }


def _large(res: CallResult) -> bool:
    """Whether the answers that carried the result were big (or of unknown size)."""
    total = sum(d.bytes for d in res.documents)
    for ex in (res.exchange, *res.extra_exchanges):
        length = {k.lower(): v for k, v in ex.response_headers.items()}.get("content-length")
        if length is None or not length.isdigit():
            return True  # chunked or unknown: treat as large
        total += int(length)
    return total > OFFLOAD_BYTES


def _store(ctx: AppContext, sha256: str, result: Any) -> str:
    """Write and fsync a large result (run in a thread: file I/O never blocks the loop)."""
    return ctx.results.put(sha256, canonical(result))


def _no_room(ctx: AppContext, op: Operation, why: str, exchanges: list[Any]) -> Decision:
    """The result was fetched and checked but the disk has no room for it: nothing is
    written, and it is fetched again later (a step that applies: not a step failure), until
    the result deadline makes it `result_unavailable`."""
    if ctx.now() >= op.result_deadline_at:
        d = _unavailable(f"the gateway had no room to store the result until the deadline ({why})")
        d.exchanges = exchanges
        return d
    cause = f"result not kept: {why}; will fetch it again"
    delay = ctx.settings.scaled(STORAGE_RETRY_SECONDS)
    return Decision(
        None,
        cause,
        fields={"poll_attempt": op.poll_attempt + 1},
        delay=delay,
        exchanges=exchanges,
        notes=[Note(STORAGE_FULL, cause, {"retry_in_seconds": delay})],
    )


def _unavailable(why: str) -> Decision:
    return needs_human(
        State.RESULT_UNAVAILABLE,
        why,
        Evidence(EvidenceKind.RESULT_UNAVAILABLE),
        f"The provider finished but {why.rstrip().rstrip('.')}.",
    )


async def checked(
    ctx: AppContext, profile: Profile, op: Operation, res: CallResult
) -> tuple[CheckVerdict, dict[str, Any]]:
    """Check a fetched result by `rules_for`; when it passes, the row fields that store it
    (inline or in the result store, its size and sha256, `result_summary` from its items)."""
    rules = rules_for(profile, op)
    if _large(res):  # canonical JSON, sha256 and jsonschema over it are CPU work: off the loop
        verdict = await asyncio.to_thread(
            check, res.result, claimed_sha256=res.result_sha256, items=res.items, rules=rules
        )
    else:  # a thread hop costs more than checking a small result
        verdict = check(res.result, claimed_sha256=res.result_sha256, items=res.items, rules=rules)
    if not verdict.ok:
        return verdict, {}
    fields: dict[str, Any] = {"result_size": verdict.size, "result_sha256": verdict.sha256}
    if verdict.size <= ctx.settings.inline_result_max_bytes:
        fields["result"] = res.result
    else:
        fields["result_ref"] = await asyncio.to_thread(_store, ctx, verdict.sha256, res.result)
    if res.counts is not None and res.counts.known():
        fields["result_summary"] = summary_for(profile, res.counts)
    return verdict, fields


async def _judge(
    ctx: AppContext, profile: Profile, op: Operation, res: CallResult, exchanges: list[Any]
) -> Decision:
    try:
        verdict, fields = await checked(ctx, profile, op, res)
    except StorageFull as full:
        return _no_room(ctx, op, str(full), exchanges)
    if not verdict.ok:
        return needs_human(
            State.RESULT_VALIDATION_FAILED,
            f"result failed its checks: {verdict.code}",
            Evidence(EvidenceKind.RESULT_INVALID, {"code": verdict.code}),
            verdict.message or "",
            details={"check": verdict.code},
            exchanges=exchanges,
        )
    found = judge(facts_of(profile, op, res))
    if found.counts is not None:
        fields["result_summary"] = summary_for(profile, found.counts)
    else:
        fields.pop("result_summary", None)
    failed_items = list(res.failed_items)
    fields["errors_listed"] = len(failed_items)  # what `/errors` holds: messages say it
    if found.result is ResultClass.FAILED:
        summary = fields.get("result_summary") or summary_for(profile, None)
        fields["result_summary"] = summary
        kept = summary["succeeded"] > 0 and holds_items(res.result)
        if not kept:  # no output is kept, so none is offered (`GET /result` is 409)
            for name in _OUTPUT_FIELDS:
                fields.pop(name, None)
        if not summary["succeeded"]:
            fields["error"] = _nothing_usable(summary, res.error)
        else:  # the job itself failed after some items: failed, the partial output kept
            missing = "" if kept else "; the provider's documents hold none of their output"
            fields["error"] = {
                "code": "remote_failed",
                "message": f"the job failed after {summary['succeeded']} of "
                f"{summary['processed']} items were processed{missing}",
                "details": {"source": "provider"},
            }
        return Decision(
            State.FAILED,
            f"the result shows no usable output ({found.reason})",
            Evidence(EvidenceKind.RESULT_FAILED, dict(summary)),
            fields,
            exchanges=exchanges,
            failed_items=failed_items,
        )
    assert found.result in (ResultClass.SUCCEEDED, ResultClass.COMPLETED_WITH_ERRORS)
    fields["outcome"] = found.result.value
    return Decision(
        State.SUCCEEDED,
        "result collected and valid"
        + ("" if found.may_report_success else f"; {found.result.value}: {found.reason}"),
        Evidence(EvidenceKind.RESULT_VALID),
        fields,
        exchanges=exchanges,
        failed_items=failed_items,
    )


def facts_of(profile: Profile, op: Operation, res: CallResult) -> Facts:
    """What the outcome table reads of a collected result: the remote class recorded on
    the row (a success class when the create answer carried the result), the counts
    read, and the items its documents listed as not succeeded."""
    try:
        remote = RemoteClass(op.remote_class) if op.remote_class else None
    except ValueError:
        remote = None
    if remote is None:
        remote = res.remote_class or RemoteClass.SUCCEEDED
    return Facts(remote, counts_from_output(res), len(res.failed_items), profile.itemless)


def counts_from_output(res: CallResult) -> Counts | None:
    """The provider's counts; when it gives none but lists failed items (an adapter that
    marks items of the output failed), the counts the output itself shows: JSON Lines keep
    failed lines apart from the output (processed = output + failed), a JSON list holds
    them among its items (processed = its length). None when the output shows no number
    (then only the failed items are counted: nothing is invented for the rest)."""
    if res.counts is not None and res.counts.known():
        return res.counts
    listed = len(res.failed_items)
    if not listed or not isinstance(res.result, list):
        return res.counts
    n = len(res.result)
    if any(d.format == "jsonl" for d in res.documents):
        return Counts(total=n + listed, succeeded=n, failed=listed)
    if n >= listed:
        return Counts(total=n, succeeded=n - listed, failed=listed)
    return res.counts


def holds_items(result: Any) -> bool:
    """Whether a collected output holds something to offer (an empty list does not): a
    partial output is kept only then, so no words offer what `GET /result` would not show."""
    return result is not None and result != [] and result != {}


def summary_of(counts: Counts) -> dict[str, int]:
    """`result_summary`: processed / succeeded / failed / not_processed, zeros filled in."""
    items = counts.as_items() or {}
    return {k: int(items.get(k, 0)) for k in SUMMARY_KEYS}


def summary_for(profile: Profile, counts: Counts | None) -> dict[str, Any]:
    """`summary_of`, and the unit the profile counts in when it is not items (kept on the
    row for the words: docs/profiles.md, "Counts an agent can check")."""
    summary: dict[str, Any] = summary_of(counts) if counts else dict.fromkeys(SUMMARY_KEYS, 0)
    unit = profile.counts.unit if profile.counts is not None else "items"
    if unit != "items":
        summary["unit"] = unit
    return summary


def _nothing_usable(summary: dict[str, int], said: dict[str, Any] | None) -> dict[str, Any]:
    """Why nothing is usable: the counts in words, then the provider's own reason when its
    answer gave one (`pointers.error`; Vertex's filter reasons when every sample was
    blanked)."""
    found = _counted_nothing(summary)
    reason = str(said.get("message") or "").strip().rstrip(".") if said else ""
    if reason:
        found["message"] = f"{found['message']}: {reason}"
    return found


def _counted_nothing(summary: dict[str, int]) -> dict[str, Any]:
    if not summary["processed"] and not summary["failed"]:
        return {
            "code": "no_items",
            "message": "the provider reported the job done but counted no item processed",
        }
    if not summary.get("not_processed"):
        message = f"every one of {summary['processed']} items failed"
    else:
        message = (
            f"no item of {summary['processed']} got done: {summary['failed']} failed, "
            f"{summary['not_processed']} were never processed"
        )
    return {"code": "all_items_failed", "message": message}
