"""The audit chain's pruned prefix: a signed checkpoint, then the entries it covers.

Entries are removed only from the start of the chain, up to (not including) the first
that is younger than the cutoff or names an operation still kept, and never the last
one (the head's). The checkpoint records the last removed entry's seq and hash and how
many entries the prefix held, with its HMAC under JOBGATE_AUDIT_SIGNING_KEY; the
database lets an entry be deleted only once a checkpoint covers it (migration 0020).
`jobgate audit verify` starts from the newest checkpoint (app/audit/commands.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, delete, exists, func, or_, select

from app.audit.chain import sign_checkpoint
from app.audit.models import AuditCheckpoint, AuditEntry, AuditHead
from app.core.db.row_table import table_of
from app.core.db.txn import Txn
from app.operations.repository.tables import OPS

LOG = table_of(AuditEntry)
HEAD = table_of(AuditHead)
CHECKPOINTS = table_of(AuditCheckpoint)


@dataclass(frozen=True)
class Checkpointed:
    removed: int  # entries removed by this call
    seq: int  # the checkpoint's seq after it (0: none yet)


async def latest(txn: Txn) -> tuple[int, int]:
    """(seq, count) of the newest checkpoint, (0, 0) without one."""
    newest = select(CHECKPOINTS.c.seq, CHECKPOINTS.c.count).order_by(CHECKPOINTS.c.seq.desc())
    row = (await txn.execute(newest.limit(1))).first()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


async def checkpoint_prefix(
    txn: Txn, *, cutoff: datetime, now: datetime, limit: int, signing_key: str | None
) -> Checkpointed:
    """Move the checkpoint forward over at most `limit` prunable entries, in this
    transaction; removes nothing when the first entry after it must be kept."""
    start, count = await latest(txn)
    head_seq = (await txn.execute(select(HEAD.c.seq).where(HEAD.c.id == 1))).scalar()
    if head_seq is None:
        return Checkpointed(0, start)
    upper = min(start + limit, int(head_seq) - 1)  # the head's entry always stays
    if upper <= start:
        return Checkpointed(0, start)
    kept = or_(
        LOG.c.at >= cutoff,
        and_(LOG.c.operation_id.is_not(None), exists().where(OPS.c.id == LOG.c.operation_id)),
    )
    window = and_(LOG.c.seq > start, LOG.c.seq <= upper)
    blocker = (await txn.execute(select(func.min(LOG.c.seq)).where(window, kept))).scalar()
    end = upper if blocker is None else int(blocker) - 1
    if end <= start:
        return Checkpointed(0, start)
    span = and_(LOG.c.seq > start, LOG.c.seq <= end)
    n = int((await txn.execute(select(func.count()).select_from(LOG).where(span))).scalar_one())
    last_hash = (await txn.execute(select(LOG.c.hash).where(LOG.c.seq == end))).scalar_one()
    total = count + n
    await txn.execute(
        CHECKPOINTS.insert().values(
            seq=end,
            hash=last_hash,
            count=total,
            at=now,
            signature=sign_checkpoint(signing_key, end, last_hash, total) if signing_key else None,
        )
    )
    removed = (await txn.execute(delete(LOG).where(span))).rowcount
    return Checkpointed(int(removed), end)
