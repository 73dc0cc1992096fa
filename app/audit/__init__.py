"""The tamper-evident audit trail: hash-chained entries, appended with their facts.

`record` / `record_history` queue an entry in the caller's transaction (see
`trail`); `jobgate audit verify|export` read the chain back (see `verify`,
`export`). The chain format is in `chain`.
"""

from app.audit.trail import (
    append_pending,
    audited_database,
    record,
    record_history,
    session_info,
)

__all__ = ["append_pending", "audited_database", "record", "record_history", "session_info"]
