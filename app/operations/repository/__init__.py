"""All SQL about operations, their history and result items: this package is the one
owner of those tables. Functions flush, never commit.

- `tables`: the tables, and the `Fence` a lease holder writes under;
- `writes`: inserts and guarded updates (state compare-and-set, fenced, operator);
- `leases`: claiming due operations, renewing a lease, the next due time;
- `reads`: one operation, its history and result items, lists and the inbox;
- `counts`: counts by state and of the inbox, for the metrics scrape.
"""

from app.operations.repository.counts import attention_count, count_by_state, open_state_counts
from app.operations.repository.leases import (
    Witness,
    claim_due,
    next_due_at,
    release_unstarted,
    renew_lease,
)
from app.operations.repository.reads import (
    REPLAY_ROW,
    RESEND_ROW,
    CreateTally,
    ListFilter,
    attention_inbox,
    create_tally,
    get,
    get_by_key,
    get_by_remote_job,
    history,
    job_owner,
    list_operations,
    result_items,
)
from app.operations.repository.retention import tombstone, tombstone_of
from app.operations.repository.tables import Fence
from app.operations.repository.writes import (
    Fields,
    HistoryRow,
    append_history,
    append_history_rows,
    fenced_update,
    history_row,
    insert_operation,
    insert_result_items,
    make_due_now,
    operator_update,
    record_cancel_intent,
    transition,
)

__all__ = [
    "tombstone",
    "tombstone_of",
    "Fence",
    "Fields",
    "HistoryRow",
    "ListFilter",
    "append_history",
    "append_history_rows",
    "attention_count",
    "attention_inbox",
    "claim_due",
    "count_by_state",
    "open_state_counts",
    "fenced_update",
    "get",
    "get_by_key",
    "get_by_remote_job",
    "history",
    "job_owner",
    "history_row",
    "insert_operation",
    "insert_result_items",
    "list_operations",
    "make_due_now",
    "next_due_at",
    "operator_update",
    "record_cancel_intent",
    "release_unstarted",
    "Witness",
    "renew_lease",
    "result_items",
    "REPLAY_ROW",
    "RESEND_ROW",
    "CreateTally",
    "create_tally",
    "transition",
]
