"""The one path a step's decisions take to the database: `apply`.

What is durable after a step (docs/architecture.md, "What a step writes"):

- A change is written in one transaction under the lease's fence: the transition (or
  the observation), the exchanges it rests on, the schedule, and the history and audit
  rows. Several decisions made in a row under one lease are written together when
  the first may wait for the next (`Decision.defer`: a pure step, or a state that a
  crash sends back to a status read anyway): `accepted -> observing` and the first
  observation, or `observing -> result_collecting -> succeeded`.
- A poll that changes nothing (the same remote state and progress as the row holds, an
  answer read without fault) writes nothing durable while the next poll stays under
  this lease in this process: the row's lease says who holds it, and a crash lets the
  lease lapse and another observer polls again. Handed back to the queue, it writes
  only the schedule. Either way it is counted (`quiet_polls`, `quiet_last_at`), and
  the next change writes one history row for all of them ("seen running x14, last at
  T") before its own.

A decision that carries a provider's answer (its exchanges) is kept when the write
fails because the database is away (or busy, or full): for a create, that answer may be
the job id of a job that now runs, which a provider without an idempotency token or a
lookup could never tell again. The write is tried again, with backoff, while the lease
holds (past it another observer may own the operation) and while fewer than `MAX_KEPT`
answers wait in this process; then the failure is raised and the step counts as failed
(docs/operations.md, "When storage or the database fails").
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from app.core.db.txn import Txn
from app.core.db.write_faults import kind_of
from app.core.obs import telemetry
from app.core.runtime import faults
from app.operations import ledger
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import Evidence, TransitionRefused, is_done
from app.operations.driver import lease, step_failures
from app.operations.driver.decision import Decision
from app.operations.repository import Fence, HistoryRow

log = logging.getLogger(__name__)

REFUSAL_RETRY_SECONDS = 60.0  # a refused transition is a bug: look again later, slowly
MAX_KEPT = 1000  # provider answers waiting for the database, per process (a few KB each)
FIRST_RETRY_SECONDS = 0.25  # a kept answer's next write; then doubled, at most:
MAX_RETRY_SECONDS = 5.0
# What a poll may change and still be "the same": the counter of polls made; and, when
# progress was written less than `progress_write_seconds` ago, the progress.
_QUIET_FIELDS = frozenset({"poll_attempt"})
_PROGRESS = frozenset({"progress_completed", "progress_total"})


async def apply(
    ctx: AppContext,
    op: Operation,
    fence: Fence,
    decision: Decision,
    *,
    held: bool = False,
    before: Sequence[Decision] = (),
) -> bool:
    """Write `before` (decisions deferred to this one) and `decision`, under the fence; True
    if it applied (a quiet poll held here applies without a write). `op` is updated to
    match what was written."""
    batch = [*before, decision]
    if quiet(ctx, op, batch):
        if held:
            _count_quiet(ctx, op, decision)
            return True
        return await _kept(
            ctx, op, batch, lambda: ctx.writes.run(partial(_write_quiet, ctx, op, fence, decision))
        )
    return await _kept(
        ctx, op, batch, lambda: ctx.writes.run(partial(_write, ctx, op, fence, batch, held))
    )


def quiet(ctx: AppContext, op: Operation, batch: Sequence[Decision]) -> bool:
    """A lone observation, made from an answer read without fault (a failing read is a
    fact: it is written), that changes nothing of the row but the poll counter, or only
    the progress when the progress was written less than `progress_write_seconds` ago."""
    if len(batch) != 1:
        return False
    d = batch[0]
    if d.to is not None or d.notes or d.failed_items or d.observation is None:
        return False
    if d.observation.get("outcome") != "ok":
        return False
    changed = {k for k, v in d.fields.items() if getattr(op, k) != v} - _QUIET_FIELDS
    if not changed:
        return True
    if not changed <= _PROGRESS:
        return False
    since = (ctx.now() - op.updated_at).total_seconds()
    return since < ctx.settings.progress_write_seconds


def _count_quiet(ctx: AppContext, op: Operation, decision: Decision) -> None:
    """A quiet poll held here: counted and scheduled in memory only."""
    now = ctx.now()
    for key, value in decision.fields.items():
        setattr(op, key, value)
    op.quiet_polls += 1
    op.quiet_last_at = now
    op.next_poll_at = now + timedelta(seconds=decision.delay or 0.0)
    op.next_poll_reason = decision.cause[:200]


async def _kept(ctx: AppContext, op: Operation, batch: list[Decision], write: Any) -> bool:
    """`write()`, retried while the database is away if the batch carries an answer."""
    try:
        written: bool = await write()
        return written
    except Exception as exc:
        answered = any(d.exchanges for d in batch)
        if not answered or kind_of(exc) is None or ctx.answers_waiting >= MAX_KEPT:
            raise
        first = exc
    ctx.answers_waiting += 1
    try:
        delay = FIRST_RETRY_SECONDS
        while True:
            left = lease.left(ctx, op)
            if left <= delay:
                log.error("the database stayed away past the lease of %s; answer dropped", op.id)
                raise first
            log.warning(
                "database away while writing a provider's answer for %s; kept, retrying in "
                "%.2f s (%.1f s of lease left)",
                op.id,
                delay,
                left,
                extra={"event": "answer_kept"},
            )
            await ctx.clock.sleep(delay)
            try:
                written = await write()
            except Exception as exc:
                if kind_of(exc) is None:
                    raise
                delay = min(delay * 2, MAX_RETRY_SECONDS)
                continue
            log.info("kept answer for %s written", op.id, extra={"event": "answer_kept"})
            return written
    finally:
        ctx.answers_waiting -= 1


def schedule(
    ctx: AppContext, op: Operation, decision: Decision, *, held: bool = False
) -> dict[str, Any]:
    """Lease and next-poll fields written in the same statement as the decision.

    Held, the lease is renewed rather than released, so the row shows when the next
    poll is due and who will make it; if this process dies, the lease lapses and the
    operation is due to any observer.
    """
    new_state = decision.to or op.state
    if decision.again and not is_done(new_state):
        return {}
    now = ctx.now()
    if held:
        fields: dict[str, Any] = {"lease_expires_at": now + timedelta(seconds=ctx.lease_seconds)}
    else:
        fields = {"lease_owner": None, "lease_expires_at": None}
    if is_done(new_state):
        fields.update(next_poll_at=None, next_poll_reason=None)
    else:
        delay = decision.delay if decision.delay is not None else 0.0
        fields.update(
            next_poll_at=now + timedelta(seconds=delay),
            next_poll_reason=decision.cause[:200],
        )
    return fields


async def _write_quiet(
    ctx: AppContext, op: Operation, fence: Fence, decision: Decision, txn: Txn
) -> bool:
    """A quiet poll handed back to the queue: the schedule and the count, nothing else."""
    now = ctx.now()
    fields = {
        **decision.fields,
        **schedule(ctx, op, decision),
        **step_failures.reset(op),
        "quiet_polls": op.quiet_polls + 1,
        "quiet_last_at": now,
    }
    applied = await repo.fenced_update(
        txn, op.id, fence=fence, at=op.updated_at, fields=fields, expect_state=op.state
    )
    if applied:
        for key, value in fields.items():
            setattr(op, key, value)
    return applied


def _facts(op: Operation, decision: Decision, actor: str, now: datetime) -> list[HistoryRow]:
    """The history rows a decision rests on: its exchanges, then its notes."""
    rows = [
        ledger.row(
            op,
            kind="exchange",
            actor=actor,
            now=now,
            cause=f"{ex.operation} {ex.method} -> {ex.status_code}",
            data=ex.to_dict(),
        )
        for ex in decision.exchanges
    ]
    rows += [  # facts too, e.g. a refused resend
        ledger.row(op, kind=n.kind, actor=actor, now=now, cause=n.cause, data=n.data)
        for n in decision.notes
    ]
    return rows


def _quiet_summary(op: Operation, actor: str, now: datetime) -> list[HistoryRow]:
    """One row for the quiet polls counted since the last change, if any."""
    if not op.quiet_polls:
        return []
    last = op.quiet_last_at.isoformat() if op.quiet_last_at else None
    return [
        ledger.row(
            op,
            kind="observation",
            actor=actor,
            now=now,
            cause=f"seen {op.remote_state or 'unchanged'} x{op.quiet_polls}, last at {last}",
            data={
                "unchanged_polls": op.quiet_polls,
                "last_at": last,
                "remote_state": op.remote_state,
                "remote_class": op.remote_class,
                "progress": {"completed": op.progress_completed, "total": op.progress_total},
            },
        )
    ]


async def _write(
    ctx: AppContext, op: Operation, fence: Fence, batch: list[Decision], held: bool, txn: Txn
) -> bool:
    """In one transaction (shared with other steps' writes under load, `ctx.writes`): for
    each decision its exchanges and its transition (or, last, its observation), then the
    schedule of the last.

    Exchanges are facts (the call was made) and are kept even when the write that
    follows is fenced off; the fenced write itself is recorded as such.
    """
    now = ctx.now()
    from_state = op.state
    actor = f"observer:{ctx.worker_id}"
    last = batch[-1]
    rows: list[HistoryRow] = []  # the transaction's history rows, written in one statement
    facts = _quiet_summary(op, actor, now)
    fields: dict[str, Any] = {"quiet_polls": 0, "quiet_last_at": None} if facts else {}
    applied = True
    for decision in batch:
        fields.update(decision.fields)
        if decision is last:
            fields.update(schedule(ctx, op, decision, held=held), **step_failures.reset(op))
        facts += _facts(op, decision, actor, now)
        if decision.to is None:
            applied = await _observe(txn, op, fence, decision, fields, actor, now, facts, rows)
            if applied:
                facts = []
            break
        try:
            applied = await ledger.transition(
                ctx,
                txn,
                op,
                decision.to,
                evidence=decision.evidence or Evidence("missing"),  # refused: no proof
                actor=actor,
                cause=decision.cause,
                now=now,
                fence=fence,
                fields=fields,
                data={"observation": decision.observation} if decision.observation else None,
                before=facts,
                into=rows,
            )
        except TransitionRefused as err:
            await ledger.write(txn, rows)
            await ledger.record_refusal(txn, op, err, actor=actor, now=now, before=facts)
            await repo.fenced_update(
                txn,
                op.id,
                fence=fence,
                at=now,
                fields=retry_fields(ctx, f"refused: {err.reason}"),
            )
            return False
        if not applied:
            break
        facts, fields = [], {}
        if decision.failed_items:
            await repo.insert_result_items(txn, op.id, decision.failed_items)
    if applied:
        await ledger.write(txn, rows)
    # Inside the transaction, its row lock held (a process frozen or killed here).
    faults.maybe_crash(ctx.settings, f"inside_apply_{from_state}")
    if not applied:
        await _fenced(txn, op, fence, last, actor, now, [*rows, *facts])
    return applied


async def _fenced(
    txn: Txn,
    op: Operation,
    fence: Fence,
    decision: Decision,
    actor: str,
    now: datetime,
    facts: list[HistoryRow],
) -> None:
    """A write the fence refused: the facts it rests on, and that it was refused."""
    telemetry.fenced(op.id, op.trace_id, decision.cause)
    fenced = ledger.row(
        op,
        kind="fenced",
        actor=actor,
        now=now,
        cause="write refused: lease lost or the operation moved on",
        data={"lease_token": fence.token, "wanted": decision.cause},
    )
    await ledger.write(txn, [*facts, fenced])


async def _observe(
    txn: Txn,
    op: Operation,
    fence: Fence,
    decision: Decision,
    fields: dict[str, Any],
    actor: str,
    now: datetime,
    facts: list[HistoryRow],
    rows: list[HistoryRow],
) -> bool:
    """No state change: the schedule and fields; `facts` and the observation join `rows`."""
    applied = await repo.fenced_update(
        txn, op.id, fence=fence, at=now, fields=fields, expect_state=op.state
    )
    if applied:
        rows.extend(facts)
        if decision.observation is not None:
            rows.append(
                ledger.row(
                    op,
                    kind="observation",
                    actor=actor,
                    cause=decision.cause,
                    now=now,
                    data=decision.observation,
                )
            )
        for key, value in fields.items():
            setattr(op, key, value)
        op.updated_at = now  # as written: a holder compares it with the row's (hold.py)
    return applied


def retry_fields(ctx: AppContext, why: str) -> dict[str, Any]:
    """Back to the queue, due again in a while (scaled), the lease released."""
    delay = ctx.settings.scaled(REFUSAL_RETRY_SECONDS)
    return {
        "lease_owner": None,
        "lease_expires_at": None,
        "next_poll_at": ctx.now() + timedelta(seconds=delay),
        "next_poll_reason": why[:200],
    }
