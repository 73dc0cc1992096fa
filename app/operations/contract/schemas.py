"""Request and response bodies of the agent API (what OpenAPI documents)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, HttpUrl
from typing_extensions import TypeAliasType

from app.core.http.json_guard import MAX_SAFE_INTEGER, NO_NUL, JsonObject
from app.providers.language.words import SingleCreate

MAX_LABELS = 20
# docs/agent-api.md, "The create request": a label is the agent's own tag, short and
# plain; a longer one is refused (422, nothing written) rather than stored or cut.
LABEL_KEY_CHARS = 64
LABEL_VALUE_CHARS = 256
# Aliases, as `Text` is (app/core/http/json_guard.py): a pattern on a dict's key type is
# documented as `patternProperties`, which lets a key with a NUL through the schema
# while the server refuses it (a schema-valid request rejected).
LabelKey = TypeAliasType(
    "LabelKey", Annotated[str, Field(min_length=1, max_length=LABEL_KEY_CHARS, pattern=NO_NUL)]
)
LabelValue = TypeAliasType(
    "LabelValue", Annotated[str, Field(max_length=LABEL_VALUE_CHARS, pattern=NO_NUL)]
)


class DeadlinesIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    create_seconds: float | None = Field(default=None, gt=0, le=7 * 86400)
    result_seconds: float | None = Field(default=None, gt=0, le=30 * 86400)
    cancel_seconds: float | None = Field(default=None, gt=0, le=7 * 86400)


class ValidationIn(BaseModel):
    """Checks the result must pass before `succeeded`, beside the profile's own."""

    model_config = ConfigDict(extra="forbid")

    json_schema: JsonObject | None = Field(
        default=None, description="A JSON Schema the collected result must match."
    )
    max_bytes: int | None = Field(
        default=None,
        gt=0,
        le=MAX_SAFE_INTEGER,  # I-JSON: larger integers are refused anywhere in a body
        description="The largest result accepted; never more than the profile's own bound.",
    )
    require_counts: bool = Field(
        default=False,
        description="Item counts must add up (processed = succeeded + failed + not_processed).",
    )


class CreateOperationRequest(BaseModel):
    """Start an operation. The `Idempotency-Key` header is required.

    `input` is the provider's (the profile sends what it names of it); every other field
    is a gateway-side option and sits beside `input`, never inside it: an option's name
    at the top of `input` is refused (422 `gateway_option_in_input`) unless the provider's
    profile sends that input field by name."""

    model_config = ConfigDict(extra="forbid")

    provider: str = Field(min_length=1, max_length=64, pattern=NO_NUL)
    kind: str = Field(min_length=1, max_length=64, pattern=NO_NUL)
    input: JsonObject = Field(description="The provider's input; no gateway options in it.")
    deadlines: DeadlinesIn | None = None
    callback_url: HttpUrl | None = None
    labels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict,
        max_length=MAX_LABELS,
        description="The agent's own tags (at most 20; keys 1-64 characters, values at most "
        "256), filterable with `?label=key=value`. A policy rule that must bind an agent "
        "selects its key, not a label.",
    )
    approval: JsonObject | None = None
    validation: ValidationIn | None = None


# The create request's gateway-side options: never read from `input`, never sent.
GATEWAY_OPTIONS = tuple(f for f in CreateOperationRequest.model_fields if f not in (
    "provider", "kind", "input"
))  # fmt: skip


class NextAction(BaseModel):
    """The one call to make next (absent when there is nothing to call), whole in `call`
    and field by field in `method`, `path` and `query`; over MCP, `tool` and `arguments`."""

    call: str = Field(description="The REST call, e.g. `GET /v1/operations/op_.../wait`.")
    method: str = Field(description="The call's HTTP method, e.g. `GET`.")
    path: str = Field(description="The call's path, without a query, e.g. `/v1/operations/op_...`.")
    query: dict[str, str | int] | None = Field(
        default=None, description="The call's query parameters, when it has any (else null)."
    )
    tool: str | None = Field(
        default=None,
        description="The MCP tool that makes the same call; only when the MCP server is on.",
    )
    arguments: dict[str, Any] | None = Field(
        default=None,
        description="The MCP tool's arguments for the same call (with `tool`, else null).",
    )
    after_seconds: float | None = Field(
        default=None, description="Make the call no sooner than this many seconds from now."
    )


class EstimateOut(BaseModel):
    """What the time left is learned from: recent succeeded jobs of the same provider and
    kind (docs/agent-api.md, "How long")."""

    p50_seconds: float = Field(description="Their median duration, create to success.")
    p90_seconds: float = Field(description="90% of them took at most this long.")
    based_on: int = Field(description="How many finished jobs the two are learned from.")


class ProgressOut(BaseModel):
    completed: int | None = None
    total: int | None = None


class ErrorOut(BaseModel):
    code: str
    message: str
    details: dict[str, Any] | None = None


class Guarantees(BaseModel):
    """What jobgate can promise about this operation's provider."""

    single_create: SingleCreate = Field(
        description="How one remote job per operation is ensured: `token` (the provider "
        "honours the idempotency token), `lookup` (no token; the job is found again by its "
        "client reference, never resent) or `none` (neither: an unconfirmed create goes to "
        "a human, never resent)."
    )


class ResultSummary(BaseModel):
    """Item counts of a result, when the provider reports them. Only `succeeded` items
    are done: `failed` and `not_processed` ones never are, whatever the job's state."""

    processed: int = Field(default=0, description="Every item the job had (its total).")
    succeeded: int = Field(default=0, description="Items that ran and succeeded.")
    failed: int = Field(default=0, description="Items that ran and failed.")
    not_processed: int = Field(
        default=0,
        description="Items that never ran (expired, cancelled before they started, or "
        "never accounted for by the provider).",
    )


class OperationBody(BaseModel):
    """The operation as an agent sees it (docs/agent-api.md, "The operation body")."""

    operation_id: str
    status: Literal[
        "processing",
        "awaiting_approval",
        "cancelling",
        "succeeded",
        "completed_with_errors",
        "failed",
        "cancelled",
        "needs_attention",
    ]
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
    progress: ProgressOut | None
    result: Any = None
    result_url: str | None = None
    result_summary: ResultSummary | None = None
    errors_url: str | None = None
    error: ErrorOut | None = None
    trace_id: str
    labels: dict[str, str] = Field(default_factory=dict)
    created_at: str
    updated_at: str
    deadlines: dict[str, str | None]
    guarantees: Guarantees
    elapsed_seconds: float = Field(
        default=0.0,
        description="Seconds since the create: to now, or to the last change once done.",
    )
    estimate: EstimateOut | None = Field(
        default=None,
        description="While not done: how long similar jobs took; null until enough of them "
        "finished (JOBGATE_ESTIMATE_MIN_JOBS), never guessed.",
    )
    estimated_seconds_left: float | None = Field(
        default=None,
        description="While not done: the median time left of similar jobs that ran at "
        "least this long; null without an estimate or once past its p90.",
    )
    expected_done_at: str | None = Field(
        default=None, description="Now plus `estimated_seconds_left` (UTC), or null."
    )
    progress_percent: float | None = Field(
        default=None, description="`progress.completed` of `progress.total`, when a total is known."
    )
    outcome: (
        Literal[
            "succeeded",
            "completed_with_errors",
            "failed",
            "cancelled",
            "needs_attention",
            "timed_out",
        ]
        | None
    ) = Field(
        default=None,
        description="How it ended: the `status` once `done`, null while not done, the same "
        "on every body (create, GET, list, wait, SSE, MCP, callbacks). Only a /wait that "
        "ended before the operation did says `timed_out` (the job continues).",
    )


class ResultBody(BaseModel):
    """`GET /result`: the collected result of a `succeeded` operation, or the partial
    output a `cancelled` or `failed` one kept (which is NOT a success)."""

    operation_id: str
    status: Literal["succeeded", "completed_with_errors", "cancelled", "failed"]
    message: str
    result: Any = None
    size: int | None = None
    sha256: str | None = None
    result_summary: ResultSummary | None = None


class OperationList(BaseModel):
    items: list[OperationBody]
    next_cursor: str | None


class HistoryItem(BaseModel):
    id: int
    at: str
    kind: str
    actor: str
    from_state: str | None
    to_state: str | None
    cause: str
    data: Any = None


class HistoryList(BaseModel):
    operation_id: str
    items: list[HistoryItem]


class ErrorBody(BaseModel):
    """Every error answer. About an existing operation, `operation` is its body too."""

    error: ErrorOut


class ErrorWithOperation(BaseModel):
    """An error about an existing operation (e.g. a 409 on cancel or result): the error,
    the operation's body, and its verdict at the top level too, so an agent that reads
    only the top level still knows `done`, `outcome` and what to do next."""

    error: ErrorOut = Field(
        description="The refusal; its `message` ends with the operation's own `message`."
    )
    done: bool = Field(description="The operation's `done`: read it first.")
    outcome: str | None = Field(description="The operation's `outcome` (null while not done).")
    message: str = Field(description="The operation's `message`: where it stands, what next.")
    next_action: NextAction | None = Field(description="The operation's `next_action`.")
    operation: OperationBody


class Whoami(BaseModel):
    """The caller behind the API key."""

    principal: str
    role: Literal["agent", "operator", "admin"]
    is_operator: bool


# --- operator and control requests ------------------------------------------------

MAX_CANCEL_REASON = 1000  # characters of a cancel reason that are kept


class CancelRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(default="", max_length=MAX_CANCEL_REASON, pattern=NO_NUL)


OperatorDecision = Literal[
    "resume_observing", "accept_job", "retry_collection", "abandon", "acknowledge"
]


class ResolveRequest(BaseModel):
    """An operator's decision on an operation that needs attention. `accept_job` names
    the job the operator verified in `remote_job_id`."""

    # The schema states the one rule between fields, so that a request it calls valid
    # is one the gateway takes (422 remote_job_id_required otherwise).
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "if": {"properties": {"decision": {"const": "accept_job"}}, "required": ["decision"]},
            "then": {
                "required": ["remote_job_id"],
                "properties": {"remote_job_id": {"type": "string", "minLength": 1}},
            },
        },
    )

    decision: OperatorDecision
    reason: str = Field(min_length=1, max_length=2000, pattern=NO_NUL)
    remote_job_id: str | None = Field(default=None, max_length=200, pattern=NO_NUL)
    result_deadline_seconds: float | None = Field(default=None, gt=0, le=30 * 86400)
    force: bool = Field(
        default=False,
        description="accept_job only: take the job although the provider shows nothing that "
        "proves it is this operation's (no client reference, item ids or lookup); recorded "
        "as accepted without proof. A job that does not match is refused all the same.",
    )


class ApprovalDecisionRequest(BaseModel):
    """An operator's approval or denial of a create held for approval, and why."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=2000, pattern=NO_NUL)


class AttentionItem(BaseModel):
    why: str
    operation: OperationBody


class AttentionList(BaseModel):
    items: list[AttentionItem]
