"""A provider's answer that arrives while the database is away is kept and written later.

A step calls the provider outside any transaction, then writes what it saw. If that
write fails because the database is unreachable (or busy, or full), the answer would be
lost with the exception: for a create, the job id of a job that now runs, and a provider
without an idempotency token or a lookup could never be asked again (the operation
would end `create_unconfirmed` though exactly one job runs). So the runner keeps the
decision in memory and tries the write again, with backoff, for as long as its lease
holds (docs/operations.md, "When storage or the database fails"). Past the lease
another observer may have taken the operation over; the decision is then dropped, as
before, and the step counts as failed.

Bounded: at most `MAX_KEPT` decisions wait in one process at once (each is one step's
answer, a few kilobytes); beyond that a failed write fails at once, as it always did.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from app.core.db.write_faults import kind_of
from app.operations.context import AppContext
from app.operations.domain.operation import Operation

log = logging.getLogger(__name__)

MAX_KEPT = 1000  # decisions waiting for the database, per process
FIRST_RETRY_SECONDS = 0.25  # then doubled, at most MAX_RETRY_SECONDS
MAX_RETRY_SECONDS = 5.0

_kept = 0  # decisions waiting right now, in this process


def waiting() -> int:
    """How many answers wait for the database in this process (tests, metrics)."""
    return _kept


async def write_kept(
    ctx: AppContext, op: Operation, write: Callable[[], Awaitable[bool]], *, answered: bool
) -> bool:
    """`write()`, retried while the database is away and the lease still holds, when the
    step has a provider's answer to keep (`answered`); any other failure is raised."""
    global _kept
    try:
        return await write()
    except Exception as exc:
        if not answered or kind_of(exc) is None or _kept >= MAX_KEPT:
            raise
        first = exc
    _kept += 1
    try:
        delay = FIRST_RETRY_SECONDS
        while True:
            left = _lease_left(ctx, op)
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
        _kept -= 1


def _lease_left(ctx: AppContext, op: Operation) -> float:
    if op.lease_expires_at is None:
        return 0.0
    return (op.lease_expires_at - ctx.now()).total_seconds()
