"""jobgate's Python client: the REST API over httpx2, with `start_and_wait`.

```python
from jobgate_client import Client, Succeeded, StillRunning

with Client("http://127.0.0.1:8080", api_key="jgk_...") as jg:
    outcome = jg.start_and_wait("mock", "report", {"scenario": {"name": "fast"}},
                                idempotency_key="report-2024-06", max_wait=120)
```

Needs only httpx2: nothing here imports the gateway (`app`), FastAPI or SQLAlchemy.
"""

from jobgate_client._plans import RetryPolicy
from jobgate_client.client import AsyncClient, Client
from jobgate_client.errors import (
    ApiError,
    AuthError,
    ConflictError,
    GatewayUnavailable,
    InvalidRequestError,
    JobgateError,
    NotFoundError,
    PrunedError,
    ServerError,
    UsageError,
)
from jobgate_client.outcomes import (
    Cancelled,
    CompletedWithErrors,
    Failed,
    NeedsAttention,
    Outcome,
    StillRunning,
    Succeeded,
    outcome_of,
)
from jobgate_client.types import (
    AttentionList,
    Deadlines,
    ErrorInfo,
    ErrorsPage,
    FailedItem,
    ListFilters,
    NextAction,
    Operation,
    OperationList,
    ResultBody,
    StartOptions,
    Validation,
)

__all__ = [
    "ApiError",
    "AsyncClient",
    "AttentionList",
    "AuthError",
    "Cancelled",
    "Client",
    "CompletedWithErrors",
    "ConflictError",
    "Deadlines",
    "ErrorInfo",
    "ErrorsPage",
    "Failed",
    "FailedItem",
    "GatewayUnavailable",
    "InvalidRequestError",
    "JobgateError",
    "ListFilters",
    "NeedsAttention",
    "NextAction",
    "NotFoundError",
    "PrunedError",
    "Operation",
    "OperationList",
    "Outcome",
    "ResultBody",
    "RetryPolicy",
    "ServerError",
    "StartOptions",
    "Validation",
    "StillRunning",
    "Succeeded",
    "UsageError",
    "outcome_of",
]
