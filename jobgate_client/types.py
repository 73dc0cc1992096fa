"""The bodies the jobgate REST API returns, as typed dictionaries (no pydantic needed).

They describe what the gateway sends; fields marked NotRequired may be missing on an
older gateway or appear only on a newer one (agent contract v2). Values are what the
JSON decoder produced: nothing is converted.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

JsonValue = Any  # what json.loads returns; recursive aliases add nothing for callers

Status = Literal[
    "processing",
    "awaiting_approval",
    "cancelling",
    "succeeded",
    "completed_with_errors",
    "failed",
    "cancelled",
    "needs_attention",
]
# `outcome` on a body: None while not done; `timed_out` only on /wait (the wait ended).
OutcomeName = Literal[
    "succeeded",
    "completed_with_errors",
    "failed",
    "cancelled",
    "needs_attention",
    "timed_out",
]
DONE_OUTCOMES: frozenset[str] = frozenset(
    {"succeeded", "completed_with_errors", "failed", "cancelled", "needs_attention"}
)


class NextAction(TypedDict):
    """The next call the gateway advises, whole (`call`) and field by field (`method`,
    `path`, `query`); `tool` and `arguments` name the MCP tool call (contract v2)."""

    call: str
    method: NotRequired[str]
    path: NotRequired[str]
    query: NotRequired[dict[str, str | int] | None]
    after_seconds: NotRequired[float | None]
    tool: NotRequired[str | None]
    arguments: NotRequired[dict[str, Any] | None]


class Estimate(TypedDict):
    """How long similar jobs took: median, 90th percentile, and how many were seen."""

    p50_seconds: float
    p90_seconds: float
    based_on: int


class ErrorInfo(TypedDict):
    """`{"code", "message", "details"}`: the stable code is what programs branch on."""

    code: str
    message: str
    details: NotRequired[dict[str, Any] | None]


class Progress(TypedDict, total=False):
    completed: int | None
    total: int | None


class Operation(TypedDict):
    """The operation as an agent sees it. `message` says in words whether it is finished."""

    operation_id: str
    status: Status
    done: bool
    state: str
    message: str
    next_action: NextAction | None
    poll_after_seconds: float | None
    status_url: str
    provider: str
    kind: str
    remote_job_id: str | None
    remote_state: str | None
    progress: Progress | None
    result: NotRequired[JsonValue]
    result_url: NotRequired[str | None]
    result_summary: NotRequired[dict[str, Any] | None]
    errors_url: NotRequired[str | None]
    error: NotRequired[ErrorInfo | None]
    trace_id: str
    labels: NotRequired[dict[str, str]]
    created_at: str
    updated_at: str
    deadlines: dict[str, str | None]
    guarantees: NotRequired[dict[str, Any]]
    outcome: NotRequired[OutcomeName | None]
    elapsed_seconds: NotRequired[float]
    estimate: NotRequired[Estimate | None]
    estimated_seconds_left: NotRequired[float | None]
    expected_done_at: NotRequired[str | None]
    progress_percent: NotRequired[float | None]


class OperationList(TypedDict):
    items: list[Operation]
    next_cursor: str | None


class ResultBody(TypedDict):
    """`GET /v1/operations/{id}/result`: only once collected and checked. A `cancelled`
    or `failed` status is the partial output a job that ended early kept: NOT a success."""

    operation_id: str
    status: Status
    message: NotRequired[str]  # plain words: a kept partial output says it is not a success
    result: JsonValue
    size: int | None
    sha256: str | None
    result_summary: dict[str, Any] | None


class FailedItem(TypedDict):
    position: int
    item: JsonValue


class ErrorsPage(TypedDict):
    """One bounded page of the failed items of a partial result."""

    operation_id: str
    items: list[FailedItem]
    next_cursor: str | None


class AttentionItem(TypedDict):
    why: str
    operation: Operation


class AttentionList(TypedDict):
    items: list[AttentionItem]


class HistoryItem(TypedDict):
    """One append-only history row: a transition, exchange, observation, decision, ..."""

    id: int
    at: str
    kind: str
    actor: str
    from_state: str | None
    to_state: str | None
    cause: str
    data: NotRequired[Any]


class HistoryList(TypedDict):
    operation_id: str
    items: list[HistoryItem]


Decision = Literal["resume_observing", "accept_job", "retry_collection", "abandon", "acknowledge"]


class Deadlines(TypedDict, total=False):
    """Seconds from the create: how long to try to start, wait for the result, cancel."""

    create_seconds: float
    result_seconds: float
    cancel_seconds: float


class Validation(TypedDict, total=False):
    """Checks the result must pass before it counts as succeeded (beside the profile's)."""

    json_schema: dict[str, JsonValue]
    max_bytes: int
    require_counts: bool


class StartOptions(TypedDict, total=False):
    """What a start may add beside provider, kind, input and the idempotency key: the
    gateway's options, sent beside `input` (never inside it: `input` is the provider's)."""

    deadlines: Deadlines | None
    callback_url: str | None  # gets one signed `operation.completed` event when done
    labels: dict[str, str] | None  # filterable with list(label="key=value")
    validation: Validation | None


class ListFilters(TypedDict, total=False):
    """`GET /v1/operations` filters (None: no filter); a page is newest first."""

    status: Status | None
    state: str | None
    provider: str | None
    in_flight: bool | None
    trace_id: str | None
    label: str | None  # key=value
    limit: int  # 1..200, default 50
    cursor: str | None  # next_cursor of the previous page
