"""Reconciliation after an ambiguous create, one case per provider capability.

Lookup first wherever the profile has one; a replay with the same token only for a
provider that honours it (`TokenHonoured.replay`). Past the create deadline only a
read-only lookup is made. Without a token nothing is ever sent again: each round
where a token provider would have replayed leaves a `resend_refused` history row,
and what is still unknown goes to a human with what to search for at the provider.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import Evidence, EvidenceKind, State
from app.operations.driver.decision import Decision, Note, needs_human
from app.operations.driver.single_create import (
    Capability,
    LookupOnly,
    TokenHonoured,
    check_single_send,
    send_create,
)
from app.operations.driver.step_common import (
    deadline_passed,
    delay_for,
    exchanges_of,
    provider_error,
    remote_fields,
    worker_tag,
)
from app.providers.calls.types import CallResult, Exchange, LookupResult, Outcome
from app.providers.language.profile import Profile

DEFAULT_SKEW_SECONDS = 300.0  # the search window's margin when the profile has no lookup


async def look(ctx: AppContext, profile: Profile, op: Operation) -> LookupResult:
    """The profile's lookup, paged, from the intent time minus its clock-skew margin."""
    skew = profile.lookup.skew_seconds if profile.lookup else DEFAULT_SKEW_SECONDS
    return await ctx.client.lookup(
        profile,
        token=op.provider_token,
        client_reference=op.id,
        trace_id=op.trace_id,
        worker=worker_tag(ctx, op),
        since=op.created_at - timedelta(seconds=skew),
        input=op.input,
        kind=op.kind,
    )


async def by_token(
    ctx: AppContext, profile: Profile, op: Operation, cap: TokenHonoured
) -> Decision:
    """Lookup, then (nothing listed, deadline not passed) a replay with the same token,
    confirmed by a second lookup: two ids for one token is the provider's violation.

    A replay whose answer may be lost (one was announced before this step: the process
    died after sending it, or its answer named no job) is settled by replaying again,
    never by a lookup alone: a lagging listing may show only the first job while the
    lost answer named another. A provider that keeps its token answers the same job; one
    that broke it names a second, and the operation is a `contract_violation` naming
    both (docs/single-create.md, "A broken token and a crash together")."""
    final = deadline_passed(op.create_deadline_at, ctx.now())
    ex: list[Exchange] = []
    if final and cap.lookup is None:  # past the deadline only reads, and there is none
        return unconfirmed(ctx, profile, op, cap, "create deadline passed")
    listed: list[str] = []
    if cap.lookup is not None:
        found = await look(ctx, profile, op)
        ex += found.exchanges
        if found.outcome != Outcome.OK:
            return unresolved(ctx, profile, op, cap, ex, "the lookup failed", found)
        listed = list(found.job_ids)
        if final:  # past the deadline: reads only, never a replay
            if listed:
                return _judge(op, cap, listed, ex, "lookup", sends=None)
            why = "the last lookup found no job"
            return unconfirmed(ctx, profile, op, cap, f"create deadline passed ({why})", ex)
    async with ctx.db.read() as txn:
        # An earlier replay was announced: its answer may never have reached a decision.
        lost_replay = (await repo.create_tally(txn, op.id)).replays > 0
    if listed and (len(listed) > 1 or not lost_replay):
        return _judge(op, cap, listed, ex, "lookup", sends=None)
    permit, _ = await cap.announced_replay(ctx, op)
    if permit is None:
        return unresolved(ctx, profile, op, cap, ex, "the lease was lost before the replay", None)
    replay = await send_create(ctx, profile, op, permit)
    ex += exchanges_of(replay)
    replay_id = replay.remote_job_id if replay.outcome == Outcome.OK else None
    if replay_id is None:
        if replay.outcome == Outcome.REJECTED:
            if listed:  # refused as a duplicate of the job the lookup found
                return _judge(op, cap, listed, ex, "lookup", sends=None)
            return Decision(
                State.FAILED,
                "provider rejected the create and holds no job for it",
                Evidence(EvidenceKind.NO_REMOTE_JOB),
                {"error": provider_error(replay, "rejected")},
                exchanges=ex,
            )
        return unresolved(ctx, profile, op, cap, ex, "no answer names a job", replay)
    ids = _union(listed, [replay_id])
    if listed:  # the lookup's job and the replay's answer: one job, or a broken token
        how = "lookup and a replay with the same token"
        return _judge(op, cap, ids, ex, how, sends=None, replay=replay)
    if cap.lookup is not None:
        confirm = await look(ctx, profile, op)
        ex += confirm.exchanges
        if confirm.outcome != Outcome.OK:
            return unresolved(
                ctx, profile, op, cap, ex, "the check after the replay failed", confirm
            )
        ids = _union(ids, confirm.job_ids)
        if len(ids) > 1 or replay_id in confirm.job_ids:
            return _judge(op, cap, ids, ex, "create replay", sends=None, replay=replay)
    if lost_replay:  # one answer alone, while another may be lost: ask the token again
        return await _replay_again(ctx, profile, op, cap, replay, ex)
    return _judge(op, cap, ids, ex, "create replay", sends=None, replay=replay)


async def _replay_again(
    ctx: AppContext,
    profile: Profile,
    op: Operation,
    cap: TokenHonoured,
    replay: CallResult,
    ex: list[Exchange],
) -> Decision:
    """A second replay in this step: the same job again settles it; another is a broken
    token (`contract_violation`, both named); no answer, reconcile again later."""
    permit, _ = await cap.announced_replay(ctx, op)
    if permit is None:
        return unresolved(ctx, profile, op, cap, ex, "the lease was lost before the replay", None)
    again = await send_create(ctx, profile, op, permit)
    ex += exchanges_of(again)
    if again.outcome != Outcome.OK or again.remote_job_id is None:
        return unresolved(ctx, profile, op, cap, ex, "the second replay named no job", again)
    ids = _union([replay.remote_job_id or ""], [again.remote_job_id])
    return _judge(op, cap, ids, ex, "two replays with the same token", sends=None, replay=again)


def _union(first: list[str], more: list[str]) -> list[str]:
    return first + [i for i in more if i not in first]


async def by_lookup(ctx: AppContext, profile: Profile, op: Operation, cap: LookupOnly) -> Decision:
    """Lookups only; two matches are the provider's violation only if jobgate sent one
    create (counted from history); more sends would be jobgate's own bug."""
    final = deadline_passed(op.create_deadline_at, ctx.now())
    notes = [] if final else [refused_resend(op, cap)]
    found = await look(ctx, profile, op)
    ex = list(found.exchanges)
    if found.outcome != Outcome.OK:
        why = f"the lookup failed on page {found.pages}"
        return unresolved(ctx, profile, op, cap, ex, why, found, notes)
    if len(found.job_ids) > 1:
        async with ctx.db.transaction() as txn:
            # Creates proven to have made no job (docs/single-create.md) are not counted.
            sends = (await repo.create_tally(txn, op.id)).may_have_made_a_job
        check_single_send(sends, op.id)
        return _judge(op, cap, found.job_ids, ex, "lookup", sends=sends, notes=notes)
    if found.job_ids:
        where = f"{found.pages} page(s) listed"
        how = f"lookup by client reference ({where})"
        return _judge(op, cap, found.job_ids, ex, how, None, notes=notes)
    why = (
        f"no job with client reference {op.id} listed yet "
        f"({found.pages} page(s), stopped at {found.stopped})"
    )
    return unresolved(ctx, profile, op, cap, ex, why, found, notes)


def _judge(
    op: Operation,
    cap: Capability,
    ids: list[str],
    ex: list[Exchange],
    how: str,
    sends: int | None,
    *,
    replay: CallResult | None = None,
    notes: list[Note] | None = None,
) -> Decision:
    """One job: accepted. Two or more: contract_violation, with every id and response kept."""
    if len(ids) > 1:
        sent = "" if sends is None else f" although jobgate sent {sends} create(s)"
        what = "one idempotency token" if isinstance(cap, TokenHonoured) else f"reference {op.id}"
        details: dict[str, Any] = {"job_ids": sorted(ids), "single_create": cap.guarantee.value}
        if sends is not None:
            details["creates_sent"] = sends
        return needs_human(
            State.CONTRACT_VIOLATION,
            f"provider holds {len(ids)} jobs for {what}{sent}",
            Evidence(EvidenceKind.CONFLICTING_JOB_IDS, {"job_ids": sorted(ids)}),
            f"The provider holds different jobs for {what}{sent}: {sorted(ids)}. "
            "Automation stopped; a human must pick the true job and cancel the others."
            + (
                f" The provider broke its token, so search it by client reference {op.id} "
                "too: it may hold more jobs than these."
                if isinstance(cap, TokenHonoured)
                else ""
            ),
            details=details,
            exchanges=ex,
            notes=notes,
        )
    if not ids:
        raise ValueError("_judge needs at least one job id")
    fields: dict[str, Any] = {"remote_job_id": ids[0], "poll_attempt": 0}
    if replay is not None:
        fields.update(remote_fields(replay))
    # Reconciling leads only to `accepted`: even a finished job is observed (and its
    # result collected) through the normal path.
    return Decision(
        State.ACCEPTED,
        f"{how} found the remote job",
        Evidence(EvidenceKind.REMOTE_JOB_ID, {"remote_job_id": ids[0]}),
        fields,
        delay=0.0,
        exchanges=ex,
        notes=list(notes or []),
    )


def unresolved(
    ctx: AppContext,
    profile: Profile,
    op: Operation,
    cap: Capability,
    ex: list[Exchange],
    why: str,
    last: CallResult | LookupResult | None,
    notes: list[Note] | None = None,
) -> Decision:
    """Still ambiguous: reconcile again after the backoff, or hand over at the deadline."""
    if deadline_passed(op.create_deadline_at, ctx.now()):
        return unconfirmed(ctx, profile, op, cap, f"create deadline passed ({why})", ex, notes)
    return Decision(
        State.CREATE_UNKNOWN,
        f"still ambiguous ({why}); will reconcile again",
        Evidence(EvidenceKind.AMBIGUOUS_CREATE),
        {"poll_attempt": op.poll_attempt + 1},
        delay=delay_for(ctx, profile, op, last),
        exchanges=ex,
        notes=list(notes or []),
    )


def refused_resend(op: Operation, cap: Capability) -> Note:
    """The history row of a resend that was not sent (where a token provider would replay)."""
    instead = "a lookup by client reference" if isinstance(cap, LookupOnly) else "a human"
    return Note(
        "resend_refused",
        f"create not sent again: the provider honours no idempotency token "
        f"(single_create={cap.guarantee.value}); {instead} instead",
        {"single_create": cap.guarantee.value, "client_reference": op.id},
    )


_WHAT_HAPPENED = {
    "token": "The create was never confirmed before its deadline; a remote job may exist.",
    "lookup": (
        "jobgate sent at most one create that could have started a job, and NEVER again (the "
        "provider honours no idempotency token), and no lookup found the job before the "
        "create deadline."
    ),
    "none": (
        "jobgate sent at most one create that could have started a job and does not know "
        "whether the provider started it. The provider honours no idempotency token and has "
        "no lookup, so jobgate will NOT send it again."
    ),
}


def unconfirmed(
    ctx: AppContext,
    profile: Profile,
    op: Operation,
    cap: Capability,
    cause: str,
    ex: list[Exchange] | None = None,
    notes: list[Note] | None = None,
) -> Decision:
    """`create_unconfirmed`, with what a person must search for at the provider."""
    hint, details = search_hint(ctx, profile, op)
    details["single_create"] = cap.guarantee.value
    past = deadline_passed(op.create_deadline_at, ctx.now())
    evidence = EvidenceKind.CREATE_DEADLINE if past else EvidenceKind.AMBIGUOUS_CREATE
    return needs_human(
        State.CREATE_UNCONFIRMED,
        cause,
        Evidence(evidence),
        f"{_WHAT_HAPPENED[cap.guarantee.value]} Cause: {cause.rstrip().rstrip('.')}. {hint}",
        details=details,
        exchanges=ex,
        notes=notes,
    )


def search_hint(ctx: AppContext, profile: Profile, op: Operation) -> tuple[str, dict[str, Any]]:
    """The client reference, the time window and the provider's own list call."""
    skew = timedelta(
        seconds=profile.lookup.skew_seconds if profile.lookup else DEFAULT_SKEW_SECONDS
    )
    start, end = op.created_at - skew, ctx.now() + skew
    ref = profile.client_reference
    field = {
        "metadata": f"in its metadata at {ref.pointer}",
        "body": f"in the create body at {ref.pointer}",
        "none": "(the create carried no client reference: match by time and input)",
    }[ref.location]
    # The profile's variables filled in (a Google project and location, not PROJECT).
    call, console = profile.manual_search.filled(profile.var_values(ctx.env))
    if call is None and profile.lookup is not None:
        call = f"{profile.lookup.method} {profile.base_url.rstrip('/')}{profile.lookup.path}"
    where = "".join(
        [f" with {call}" if call else "", f" or in the console at {console}" if console else ""]
    )
    text = (
        f"Search provider {profile.name}{where} for a job with client reference {op.id} "
        f"{field}, created between {_iso(start)} and {_iso(end)}. If exactly one exists, "
        "resolve this operation with decision accept_job and its remote_job_id; if none, "
        "resolve it with abandon and start a new operation if the work is still wanted."
    )
    details: dict[str, Any] = {
        "client_reference": op.id,
        "client_reference_field": f"{ref.location} {ref.pointer or ''}".strip(),
        "created_between": {"from": _iso(start), "to": _iso(end)},
        "list_call": call,
        "console_url": console,
    }
    return text, details


def _iso(ts: Any) -> str:
    return str(ts.isoformat().replace("+00:00", "Z"))
