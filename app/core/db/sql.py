"""SQL helpers shared by every repository (dialect differences kept in one place)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite

from app.core.db.txn import Txn


async def insert_if_absent(txn: Txn, table: Table, values: Mapping[str, object]) -> bool:
    """`INSERT ... ON CONFLICT DO NOTHING RETURNING id`; False when a unique key existed.

    A conflict is the expected outcome of a duplicate, not an error: raising and
    catching IntegrityError would abort the surrounding PostgreSQL transaction.
    RETURNING tells the two apart on every driver (rowcount is -1 with it on psycopg).
    """
    dialect = txn.dialect.name
    module: Any = postgresql if dialect == "postgresql" else sqlite
    stmt = module.insert(table).values(**values).on_conflict_do_nothing()
    result = await txn.execute(stmt.returning(table.c.id))
    return result.first() is not None
