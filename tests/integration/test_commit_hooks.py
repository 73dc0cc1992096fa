"""Before-commit hooks (the audit trail's append is one) run in transactions that write,
never in reads (app/core/db/txn.py), on both back-ends."""

from __future__ import annotations

from sqlalchemy import select, update

from app.core.db.database import Database
from app.core.db.row_table import table_of
from app.core.db.txn import Txn
from app.operations.domain.models import OperationTable

OPS = table_of(OperationTable)


async def test_hooks_run_in_writes_and_never_in_reads(database_url: str) -> None:
    ran: list[bool] = []

    async def hook(txn: Txn) -> None:
        ran.append(txn.wrote)

    db = Database(database_url, before_commit=[hook])
    try:
        async with db.read() as txn:
            await txn.execute(select(OPS.c.id).limit(1))
        assert ran == []
        async with db.transaction() as txn:
            await txn.execute(update(OPS).where(OPS.c.id == "none").values(kind="x"))
        assert ran == [True]
    finally:
        await db.dispose()
