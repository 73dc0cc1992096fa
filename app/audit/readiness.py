"""Whether a write can succeed, as far as the audit trail decides it: for `/v1/readyz`.

Every write appends to the audit chain in its own transaction, and an append needs the
head row (app/audit/trail.py); without it every write fails (docs/audit.md). A gateway
whose head is missing is therefore not ready, whatever else answers. One short read.
"""

from __future__ import annotations

from sqlalchemy import func, select

from app.audit.models import AuditHead
from app.core.db.database import Database
from app.core.db.row_table import table_of

HEAD = table_of(AuditHead)


async def write_blocker(db: Database, *, audit_enabled: bool) -> str | None:
    """Why no write can succeed now (the audit head is missing), or None."""
    if not audit_enabled:
        return None
    async with db.read() as txn:
        heads = (await txn.execute(select(func.count()).select_from(HEAD))).scalar_one()
    if heads == 1:
        return None
    return "the audit chain's head row is missing, so every write fails; restore it (docs/audit.md)"
