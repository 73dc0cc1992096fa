"""What `jobgate ops` commands need from wherever operations live: the calls, not the transport.

`jobgate_client.Client` (a gateway over REST) is one implementation; `local.LocalOps`
(the same services the REST API calls, straight on the database) is the other. Both
answer with the API's JSON bodies and refuse with `jobgate_client.errors.ApiError`,
so every command prints the same thing whichever it was given.
"""

from __future__ import annotations

from typing import Protocol, Unpack

from jobgate_client.types import (
    AttentionList,
    Decision,
    HistoryList,
    ListFilters,
    Operation,
    OperationList,
)


class OpsBackend(Protocol):
    """The calls behind `jobgate ops list|show|wait|cancel|resolve|approve|deny|attention`."""

    def list(self, **filters: Unpack[ListFilters]) -> OperationList: ...

    def get(self, operation_id: str) -> Operation: ...

    def history(self, operation_id: str) -> HistoryList: ...

    def wait(self, operation_id: str, timeout: float = 60.0) -> Operation: ...

    def cancel(self, operation_id: str, reason: str = "") -> Operation: ...

    def resolve(
        self,
        operation_id: str,
        decision: Decision,
        reason: str,
        *,
        remote_job_id: str | None = None,
        result_deadline_seconds: float | None = None,
        force: bool = False,
    ) -> Operation: ...

    def approve(self, operation_id: str, reason: str) -> Operation: ...

    def deny(self, operation_id: str, reason: str) -> Operation: ...

    def attention(self, limit: int = 50) -> AttentionList: ...


class BackendUnavailable(Exception):
    """The operations cannot be reached at all (e.g. a database not at the head
    migration, or not answering); the message is one line for a person."""
