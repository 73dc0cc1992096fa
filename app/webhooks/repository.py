"""All SQL of the webhook events table. Functions flush or execute, never commit.

The operations table is read and written through `app.operations.repository`.
"""

from __future__ import annotations

from app.core.db.row_table import table_of
from app.core.db.sql import insert_if_absent
from app.core.db.txn import Txn
from app.webhooks.models import WebhookEvent

EVENTS = table_of(WebhookEvent)


async def record_event(txn: Txn, **values: object) -> bool:
    """Insert the event row; False when this (provider, event id) was already recorded."""
    return await insert_if_absent(txn, EVENTS, values)
